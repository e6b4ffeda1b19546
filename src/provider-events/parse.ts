/**
 * A provider's event as stored (D-62, issue 7): its envelope (id, type, time, subject), read from the verified body,
 * and the readers the envelope and the effect (effect.ts) share. Each provider's wire format is read in these two
 * files and nowhere else.
 */
import { createHash } from 'node:crypto';
import { unstorableTextPaths } from '../http/validate.ts';
import type { Provider } from './verify.ts';

/**
 * The envelope every stored event has: its id (unique per provider), type, time, and the subscription a status event is
 * about.
 */
export interface EventEnvelope {
  eventId: string;
  eventType: string;
  occurredAt: Date | null;
  subjectId: string | null;
}

/** A payload the provider signed but that cannot be one of its events. */
export class MalformedEventError extends Error {}

export type Json = Record<string, unknown>;
export const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
export const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;

export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new MalformedEventError(`the event has no ${what}`);
  return value;
}

function providerAEnvelope(body: Json): EventEnvelope {
  const object = obj(obj(body.data).object);
  const created = typeof body.created === 'number' ? validDate(new Date(body.created * 1000), 'created') : null;
  const subjectId =
    body.type === 'customer.subscription.updated' ? (str(obj(object.metadata).subscriptionId) ?? null) : null;
  return { eventId: need(str(body.id), 'id'), eventType: need(str(body.type), 'type'), occurredAt: created, subjectId };
}
function providerBEnvelope(body: Json): EventEnvelope {
  return {
    eventId: need(str(body.id), 'id'),
    eventType: need(str(body.event), 'event'),
    occurredAt: null,
    subjectId: null,
  };
}
function providerCEnvelope(body: Json, raw: Buffer): EventEnvelope {
  const meta = obj(body.meta);
  const attributes = obj(obj(body.data).attributes);
  const at = str(attributes.updated_at) ?? str(attributes.created_at);
  const occurredAt = at && !Number.isNaN(Date.parse(at)) ? new Date(at) : null;
  // provider_c's events carry no id: the body's digest is one (a resent event is the same bytes).
  const eventType = need(str(meta.event_name), 'meta.event_name');
  const subjectId =
    eventType === 'subscription_created' || eventType === 'subscription_updated'
      ? (str(obj(meta.custom_data).subscription_id) ?? null)
      : null;
  return { eventId: createHash('sha256').update(raw).digest('hex'), eventType, occurredAt, subjectId };
}
/** The longest event id or type accepted (the document says so: provider-events/schema.ts). */
export const MAX_ENVELOPE_TEXT = 255;

const MAX_DEPTH = 64;

/** A time the event states must be one (a `created` of 1e300 is not an event). */
function validDate(date: Date, what: string): Date {
  if (Number.isNaN(date.getTime())) throw new MalformedEventError(`${what} is not a time`);
  return date;
}

/** Whether `value` nests objects or arrays deeper than `limit`; iterative, so any depth is safe to ask about. */
function depthOver(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > limit) return true;
    for (const item of Object.values(current)) stack.push([item, depth + 1]);
  }
  return false;
}

/** Reads the envelope of a verified body; throws MalformedEventError when it is not JSON or lacks its id/type. */
export function readEnvelope(provider: Provider, raw: Buffer): { body: Json; envelope: EventEnvelope } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new MalformedEventError('the body is not JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new MalformedEventError('the body is not a JSON object');
  // Stored as jsonb: text PostgreSQL cannot hold, or nesting no provider sends, is not an event (not a 500).
  if (unstorableTextPaths(parsed).length > 0)
    throw new MalformedEventError('the body holds NUL characters or unpaired UTF-16 surrogates');
  if (depthOver(parsed, MAX_DEPTH)) throw new MalformedEventError(`the body is nested deeper than ${MAX_DEPTH} levels`);
  const body = parsed as Json;
  const envelope =
    provider === 'provider_a'
      ? providerAEnvelope(body)
      : provider === 'provider_b'
        ? providerBEnvelope(body)
        : providerCEnvelope(body, raw);
  // Real ids and types are short; a huge one is not an event, and would not fit the (provider, event_id) index.
  for (const [what, value] of [
    ['id', envelope.eventId],
    ['type', envelope.eventType],
  ] as const) {
    if (value.length > MAX_ENVELOPE_TEXT)
      throw new MalformedEventError(`the event ${what} is longer than ${MAX_ENVELOPE_TEXT} characters`);
  }
  return { body, envelope };
}
