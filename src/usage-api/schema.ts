import { z } from 'zod';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import { timestampInput, uuid } from '../http/schemas.ts';
import { AGGREGATIONS } from '../metering/schema.ts';

/** U-5: at most this many events per request; more is refused whole (U-6). */
export const MAX_EVENTS_PER_BATCH = 1000;

/** The statuses and rejection codes of U-6. */
export const REJECTION_CODES = [
  'unknown_metric',
  'timestamp_out_of_window',
  'invalid_property',
  'subscription_not_found',
  'transaction_id_reused',
  'no_matching_charge',
] as const;
export type RejectionCode = (typeof REJECTION_CODES)[number];

/** An event's timestamp (events-body.ts reads it with this schema too). */
export const eventTimestamp = timestampInput;

/** The longest transactionId and metric code an event may carry (events-body.ts reads them with these too). */
export const TRANSACTION_ID_MAX = 200;
export const METRIC_CODE_MAX = 64;

const eventFields = {
  transactionId: z
    .string()
    .min(1, 'must not be empty')
    .max(TRANSACTION_ID_MAX, `must be at most ${TRANSACTION_ID_MAX} characters`),
  metric: z.string().min(1, 'must not be empty').max(METRIC_CODE_MAX, `must be at most ${METRIC_CODE_MAX} characters`),
  timestamp: eventTimestamp.optional(),
  subscriptionId: uuid.optional(),
  properties: z.record(z.string(), z.unknown()).optional(),
};

const batchOf = <T extends z.ZodType>(event: T) =>
  z.object({
    events: z
      .array(event)
      .min(1, 'must hold at least one event')
      .max(MAX_EVENTS_PER_BATCH, `must hold at most ${MAX_EVENTS_PER_BATCH} events`),
  });

/** An event sent as it happens (no timestamp: the time it is received). */
const EVENT_EXAMPLE = {
  transactionId: 'req_01HZX3K9Q2',
  metric: 'api_calls',
  subscriptionId: EXAMPLE_ID.subscription,
  properties: { endpoint: '/v1/search' },
};

/** POST /api/v1/usage/events: the API key's customer's events. */
export const v1EventsBody = batchOf(z.object(eventFields)).meta({
  examples: [{ events: [EVENT_EXAMPLE] }],
});
/** POST /api/billing/usage/events: each event names its customer. */
export const adminEventsBody = batchOf(z.object({ customerId: uuid, ...eventFields })).meta({
  examples: [{ events: [{ customerId: EXAMPLE_ID.customer, ...EVENT_EXAMPLE }] }],
});
export type EventInput = z.output<typeof adminEventsBody>['events'][number];

export const eventResultsResponse = z
  .object({
    results: z.array(
      z.object({
        transactionId: z.string(),
        status: z.enum(['accepted', 'duplicate', 'rejected']),
        error: z.object({ code: z.enum(REJECTION_CODES), message: z.string() }).optional(),
      }),
    ),
  })
  .meta({
    examples: [
      {
        results: [
          { transactionId: 'req_01HZX3K9Q2', status: 'accepted' },
          { transactionId: 'req_01HZX3K9Q1', status: 'duplicate' },
          {
            transactionId: 'req_01HZX3K9Q3',
            status: 'rejected',
            error: { code: 'unknown_metric', message: 'No metric has the code api_cals' },
          },
        ],
      },
    ],
  });

export const usageQuery = z.object({
  periodStart: timestampInput
    .optional()
    .meta({ description: 'The start of the current or a billed (closed) period; default the current one' }),
});

const tierResponse = z.object({
  upTo: z.string().nullable(),
  units: z.string(),
  unitPrice: z.string(),
  flatFee: z.string(),
  amount: z.string(),
});

export const usageResponse = z
  .object({
    subscriptionId: z.uuid(),
    periodStart: z.string(),
    periodEnd: z.string(),
    currency: z.string(),
    amount: z.string(),
    charges: z.array(
      z.object({
        chargeId: z.uuid(),
        metricCode: z.string(),
        aggregation: z.enum(AGGREGATIONS),
        quantity: z.string(),
        amount: z.string(),
        tiers: z.array(tierResponse),
      }),
    ),
  })
  .meta({
    examples: [
      {
        subscriptionId: EXAMPLE_ID.subscription,
        periodStart: '2026-01-05T09:30:00.000Z',
        periodEnd: '2026-02-05T09:30:00.000Z',
        currency: 'USD',
        amount: '148.50',
        charges: [
          {
            chargeId: EXAMPLE_ID.charge,
            metricCode: 'api_calls',
            aggregation: 'count',
            quantity: '100000',
            amount: '148.50',
            tiers: [
              { upTo: '1000', units: '1000', unitPrice: '0', flatFee: '0', amount: '0' },
              { upTo: '100000', units: '99000', unitPrice: '0.0015', flatFee: '0', amount: '148.5' },
            ],
          },
        ],
      },
    ],
  });
