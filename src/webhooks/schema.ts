import { z } from 'zod';
import { EVENT_TYPES } from '../events/types.ts';
import { iso, pageQuery, uuid, withoutControls } from '../http/schemas.ts';
import type { AttemptRow, DeliveryRow, EndpointRow } from './repo.ts';
import { EXAMPLE_ID, EXAMPLE_WEBHOOK_URL } from '../http/example-ids.ts';

const eventSelector = z.enum([...EVENT_TYPES, '*'], {
  error: `must be a known event type (${EVENT_TYPES.join(', ')}) or *`,
});

const events = z
  .array(eventSelector)
  .min(1, 'must name at least one event type')
  .max(EVENT_TYPES.length + 1)
  .transform((list) => [...new Set(list)]);

// Checked as a URL (D-73) by the service, which also resolves its host; the document says what it must be.
const url = withoutControls(z.string())
  .trim()
  .min(1, 'must not be empty')
  .max(2048, 'must be at most 2048 characters')
  .meta({ format: 'uri' });
const secret = withoutControls(
  z.string().min(16, 'must be at least 16 characters').max(256, 'must be at most 256 characters'),
);

export const createEndpointBody = z
  .object({ url, events, secret: secret.optional() })
  .meta({ examples: [{ url: EXAMPLE_WEBHOOK_URL, events: ['invoice.paid', 'subscription.canceled'] }] });
export type CreateEndpointInput = z.infer<typeof createEndpointBody>;

export const updateEndpointBody = z
  .object({
    url: url.optional(),
    events: events.optional(),
    enabled: z.boolean().optional(),
    secret: secret.optional(),
  })
  .meta({ examples: [{ events: ['invoice.paid', 'invoice.overdue', 'subscription.canceled'], enabled: true }] });
export type UpdateEndpointInput = z.infer<typeof updateEndpointBody>;

export const deliveryParams = z.object({ id: uuid, deliveryId: uuid });

/** The endpoint the document shows as an example; a create or rotation answer adds its secret. */
const ENDPOINT_EXAMPLE = {
  id: EXAMPLE_ID.endpoint,
  url: EXAMPLE_WEBHOOK_URL,
  events: ['invoice.paid', 'subscription.canceled'],
  enabled: true,
  createdAt: '2026-01-05T09:30:00.000Z',
  updatedAt: '2026-01-05T09:30:00.000Z',
  secretRotatedAt: null,
  previousSecretExpiresAt: null,
};

export const endpointResponse = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    enabled: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
    secretRotatedAt: z.string().nullable().meta({
      description: 'When the current secret was set by a rotation or a PUT; null: the one it was created with',
    }),
    previousSecretExpiresAt: z.string().nullable().meta({
      description:
        'Until when the secret a rotation replaced still signs (a second webhook-signature); null when none does',
    }),
  })
  .meta({ examples: [ENDPOINT_EXAMPLE] });
/** The endpoint with its secret: the answer of a create or a rotation, shown once. */
export const createdEndpointResponse = endpointResponse.extend({ secret: z.string() }).meta({
  examples: [{ ...ENDPOINT_EXAMPLE, secret: 'whsec_8f2b6c1e9d4a7f3b5e0c2d8a6f1b9e4c' }],
});

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export const listDeliveriesQuery = pageQuery.extend({ status: z.enum(DELIVERY_STATUSES).optional() });

export const attemptResponse = z.object({
  attempt: z.number(),
  statusCode: z.number().nullable(),
  latencyMs: z.number(),
  error: z.string().nullable(),
  responseBody: z.string().nullable(),
  at: z.string(),
});

export const deliveryResponse = z
  .object({
    id: z.string(),
    endpointId: z.string(),
    eventId: z.string(),
    eventType: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attemptCount: z.number(),
    nextAttemptAt: z.string().nullable(),
    deliveredAt: z.string().nullable(),
    createdAt: z.string(),
    attempts: z.array(attemptResponse),
  })
  .meta({
    examples: [
      {
        id: EXAMPLE_ID.delivery,
        endpointId: EXAMPLE_ID.endpoint,
        eventId: 'evt_4kq9x2m7p1',
        eventType: 'invoice.paid',
        status: 'failed',
        attemptCount: 1,
        nextAttemptAt: null,
        deliveredAt: null,
        createdAt: '2026-01-05T09:30:00.000Z',
        attempts: [
          {
            attempt: 1,
            statusCode: 503,
            latencyMs: 212,
            error: null,
            responseBody: 'Service Unavailable',
            at: '2026-01-05T09:30:00.000Z',
          },
        ],
      },
    ],
  });

/** The endpoint record; the secret is never part of it (D-71). */
export function serialiseEndpoint(row: EndpointRow) {
  const graceLeft =
    row.previous_secret_expires_at && row.previous_secret_expires_at > new Date()
      ? row.previous_secret_expires_at
      : null;
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
    secretRotatedAt: iso(row.secret_rotated_at),
    previousSecretExpiresAt: iso(graceLeft),
  };
}

export function serialiseAttempt(row: AttemptRow) {
  return {
    attempt: row.attempt,
    statusCode: row.status_code,
    latencyMs: row.latency_ms,
    error: row.error,
    responseBody: row.response_body,
    at: iso(row.at)!,
  };
}

export function serialiseDelivery(row: DeliveryRow & { attempts: AttemptRow[] }) {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: iso(row.next_attempt_at),
    deliveredAt: iso(row.delivered_at),
    createdAt: iso(row.created_at)!,
    attempts: row.attempts.map(serialiseAttempt),
  };
}
