/**
 * POST /api/v1/usage/events's body read by hand (issue 35): the route's zod schema (schema.ts v1EventsBody) checked
 * each of up to 1,000 events through the generic request path (the walk for unknown fields, zod's copy of every
 * object, the walk for unstorable text), a tenth of the web process's CPU at batches of 1,000 and a share of its
 * garbage. This reads a body the schema would accept into the very output the schema would give, and answers
 * undefined for anything else: the router then parses that body with the schema, which words every refusal as
 * for any route (test/usage/events-body.test.ts holds the two to the same answers). The timestamp and
 * subscriptionId fields still go through their zod schemas, which define them.
 */
import type { z } from 'zod';
import { uuid } from '../http/schemas.ts';
import { isUnstorable, unstorableTextPaths } from '../http/validate.ts';
import {
  eventTimestamp,
  MAX_EVENTS_PER_BATCH,
  METRIC_CODE_MAX,
  TRANSACTION_ID_MAX,
  type v1EventsBody,
} from './schema.ts';

type V1Body = z.output<typeof v1EventsBody>;
type V1Event = V1Body['events'][number];

const FIELDS: ReadonlySet<string> = new Set(['transactionId', 'metric', 'timestamp', 'subscriptionId', 'properties']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.length >= 1 && value.length <= max && !isUnstorable(value);

function readEvent(value: unknown): V1Event | undefined {
  if (!isObject(value)) return undefined;
  for (const key in value) if (!FIELDS.has(key)) return undefined;
  const { transactionId, metric } = value;
  if (!text(transactionId, TRANSACTION_ID_MAX) || !text(metric, METRIC_CODE_MAX)) return undefined;
  const event: V1Event = { transactionId, metric };
  if (value.timestamp !== undefined) {
    const timestamp = eventTimestamp.safeParse(value.timestamp);
    if (!timestamp.success) return undefined;
    event.timestamp = timestamp.data;
  }
  if (value.subscriptionId !== undefined) {
    const subscriptionId = uuid.safeParse(value.subscriptionId);
    if (!subscriptionId.success) return undefined;
    event.subscriptionId = subscriptionId.data;
  }
  if (value.properties !== undefined) {
    const properties = value.properties;
    if (!isObject(properties) || Object.hasOwn(properties, '__proto__')) return undefined;
    if (unstorableTextPaths(properties).length > 0) return undefined;
    event.properties = properties;
  }
  return event;
}

/** The schema's output for a body it accepts; undefined for any other body (the schema then refuses it). */
export function readV1EventsBody(value: unknown): V1Body | undefined {
  if (!isObject(value) || !Array.isArray(value.events)) return undefined;
  for (const key in value) if (key !== 'events') return undefined;
  const input = value.events;
  if (input.length < 1 || input.length > MAX_EVENTS_PER_BATCH) return undefined;
  const events: V1Event[] = new Array(input.length);
  for (let i = 0; i < input.length; i++) {
    const event = readEvent(input[i]);
    if (!event) return undefined;
    events[i] = event;
  }
  return { events };
}
