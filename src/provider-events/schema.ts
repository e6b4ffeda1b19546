import { z } from 'zod';
import { iso, pageQuery } from '../http/schemas.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import type { ProviderEventRow } from './repo.ts';
import { MAX_ENVELOPE_TEXT } from './parse.ts';
import { PROVIDERS } from './verify.ts';

const STATUSES = ['received', 'processed', 'ignored', 'failed'] as const;

export const listProviderEventsQuery = pageQuery.extend({
  provider: z.enum(PROVIDERS).optional(),
  status: z.enum(STATUSES).optional(),
});

export const providerEventResponse = z
  .object({
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
  })
  .meta({
    examples: [
      {
        id: EXAMPLE_ID.providerEvent,
        provider: 'provider_a',
        eventId: 'evt_1QxR7a2eZvKYlo2C',
        eventType: 'checkout.session.completed',
        status: 'processed',
        failureReason: null,
        attempts: 1,
        occurredAt: '2026-01-05T09:30:00.000Z',
        receivedAt: '2026-01-05T09:30:00.000Z',
        processedAt: '2026-01-05T09:30:00.000Z',
        payload: { id: 'evt_1QxR7a2eZvKYlo2C', type: 'checkout.session.completed' },
      },
    ],
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

export const receivedResponse = z.object({ received: z.literal(true) }).meta({ examples: [{ received: true }] });

/**
 * What each provider posts, for the document only: the route verifies the signature over the raw bytes
 * before it reads them (verify.ts), and parse.ts reads each provider's wire format; any other fields pass.
 */
export const providerEventBody = {
  provider_a: z
    .looseObject({
      id: z.string().max(MAX_ENVELOPE_TEXT),
      type: z.string().max(MAX_ENVELOPE_TEXT),
      created: z.number().int().min(-8_640_000_000_000).max(8_640_000_000_000).meta({ description: 'Unix seconds' }),
      data: z.looseObject({ object: z.looseObject({}) }),
    })
    .meta({
      examples: [
        {
          id: 'evt_1QxR7a2eZvKYlo2C',
          type: 'checkout.session.completed',
          created: 1767225600,
          data: {
            object: {
              id: 'cs_a1b2c3',
              object: 'checkout.session',
              payment_intent: 'pi_3QxR7a',
              payment_status: 'paid',
              amount_total: 4900,
              currency: 'usd',
              metadata: { invoiceId: EXAMPLE_ID.invoice },
            },
          },
        },
      ],
    }),
  provider_b: z
    .looseObject({
      id: z.string().max(MAX_ENVELOPE_TEXT),
      event: z.string().max(MAX_ENVELOPE_TEXT),
      data: z.looseObject({}),
    })
    .meta({
      examples: [
        {
          id: 'cb_5f2a9c',
          event: 'invoices.paid',
          data: {
            id: 'pay_b_81c3',
            external_id: EXAMPLE_ID.invoice,
            amount: '49.00',
            paid_amount: '49.00',
            currency: 'USD',
            status: 'PAID',
          },
        },
      ],
    }),
  provider_c: z
    .looseObject({
      meta: z.looseObject({ event_name: z.string().max(MAX_ENVELOPE_TEXT) }),
      data: z.looseObject({ id: z.string() }),
    })
    .meta({
      examples: [
        {
          meta: { event_name: 'order_created', custom_data: { invoice_id: EXAMPLE_ID.invoice } },
          data: {
            id: 'ord_9d21',
            type: 'orders',
            attributes: { status: 'paid', total: 4900, currency: 'USD', updated_at: '2026-01-01T00:00:00.000Z' },
          },
        },
      ],
    }),
} satisfies Record<(typeof PROVIDERS)[number], z.ZodType>;
