import { z } from 'zod';
import { iso, pageQuery } from '../http/schemas.ts';
import type { ProviderEventRow } from './repo.ts';
import { PROVIDERS } from './verify.ts';

const STATUSES = ['received', 'processed', 'ignored', 'failed'] as const;

export const listProviderEventsQuery = pageQuery.extend({ provider: z.enum(PROVIDERS).optional(), status: z.enum(STATUSES).optional() });

export const providerEventResponse = z.object({
  id: z.uuid(),
  provider: z.enum(PROVIDERS),
  eventId: z.string(),
  eventType: z.string(),
  status: z.enum(STATUSES),
  failureReason: z.string().nullable(),
  attempts: z.number().int(),
  occurredAt: z.string().nullable(),
  receivedAt: z.string(),
  processedAt: z.string().nullable(),
  payload: z.unknown(),
});

export function serialiseProviderEvent(row: ProviderEventRow): z.infer<typeof providerEventResponse> {
  return {
    id: row.id,
    provider: row.provider,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    failureReason: row.failure_reason,
    attempts: row.attempts,
    occurredAt: iso(row.occurred_at),
    receivedAt: iso(row.created_at)!,
    processedAt: iso(row.processed_at),
    payload: row.payload,
  };
}

export const receivedResponse = z.object({ received: z.literal(true) });
