/**
 * What an event carries that ingestion reads (U-5, U-6): the content compared for a reused transactionId, and the
 * metric's field as a value. Kept apart from the checks' order (ingest.ts); both run once per event of a batch.
 */
import { hash } from 'node:crypto';
import type { MetricRow } from '../metering/service.ts';
import { DECIMAL_PATTERN, money } from '../money.ts';
import type { EventInput } from './schema.ts';

/** Object keys sorted at every depth, so the same content hashes the same however its keys were ordered. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  return value;
}

/**
 * What U-6 compares for a reused transactionId: metric, timestamp, subscription and properties as sent, hashed
 * (SHA-256) as the JSON text of `[metric, timestamp ms or null, subscriptionId or null, properties (keys sorted) or
 * {}]`; stored hashes are that text's, so its form never changes. Written out rather than built as an array and
 * stringified (the array, the sorted copy of `{}` and the text were a fifth of an event's garbage, issue 35).
 */
export function contentHash(event: EventInput): string {
  const sub = event.subscriptionId === undefined ? 'null' : JSON.stringify(event.subscriptionId);
  const properties = event.properties === undefined ? '{}' : JSON.stringify(canonical(event.properties));
  const text = `[${JSON.stringify(event.metric)},${event.timestamp?.getTime() ?? null},${sub},${properties}]`;
  return hash('sha256', text, 'base64url');
}

/**
 * contentHash for one batch: an event sent with its metric alone (no timestamp, subscription or properties: a count
 * stamped on arrival) has the same content as every other such event of that metric, so its hash is computed once.
 */
export function batchContentHasher(): (event: EventInput) => string {
  const bare = new Map<string, string>();
  return (event) => {
    if (event.timestamp !== undefined || event.subscriptionId !== undefined || event.properties !== undefined)
      return contentHash(event);
    let known = bare.get(event.metric);
    if (known === undefined) {
      known = contentHash(event);
      bare.set(event.metric, known);
    }
    return known;
  };
}

/** The metric's field as a decimal string (a string for unique_count), null for count, undefined when invalid. */
export function readValue(
  metric: MetricRow,
  properties: Record<string, unknown> | undefined,
): string | null | undefined {
  if (metric.aggregation === 'count') return null;
  const raw = properties?.[metric.field!];
  if (metric.aggregation === 'unique_count') {
    if (typeof raw === 'string' && raw.length > 0 && raw.length <= 200) return raw;
    return typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : undefined;
  }
  if (typeof raw === 'number' && Number.isFinite(raw)) return money(raw).toFixed();
  if (typeof raw === 'string' && raw.length <= 40 && DECIMAL_PATTERN.test(raw)) return money(raw).toFixed();
  return undefined;
}
