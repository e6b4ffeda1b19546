import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { requestIntent } from '../idempotency/middleware.ts';
import { defineRoute } from '../http/route.ts';
import { createRefundBody, listRefundsQuery, refundResponse, serialiseRefund } from './schema.ts';
import { createRefund, listRefunds } from './service.ts';

const tag = 'Refunds';

export const refundRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/refunds',
    auth: 'admin',
    tag,
    summary: 'Refund part or all of a payment; provider_a payments are refunded through provider_a first',
    body: createRefundBody,
    responses: {
      201: { description: 'Refunded', schema: refundResponse },
      400: {
        description:
          'invalid_request, invalid_amount, payment_not_found, amount_exceeds_refundable (amount not in (0, ' +
          'amount - refunded])',
      },
      409: {
        description:
          'payment_not_refundable (a provider_a payment without providerReference); request_in_progress (the same ' +
          'refund, left pending by an unknown outcome, is being asked of the provider again right now)',
      },
      502: {
        description:
          'provider_error: the provider refused (nothing recorded), or its outcome is unknown (5xx, timeout), ' +
          'which the message says: then asking for the same refund again completes it once (without an ' +
          'Idempotency-Key the amount stays reserved as a pending refund of that payment and amount; under one, ' +
          'send the same key)',
      },
    },
    // request_in_progress (a retry of a refund being asked again) comes with the route's idempotency: route-errors.ts.
    errors: [
      'payment_not_found',
      'payment_not_refundable',
      'amount_exceeds_refundable',
      'provider_error',
      'invalid_amount',
    ],
    handler: async ({ deps, body, actor, ctx }) => ({
      status: 201,
      body: serialiseRefund(
        await createRefund(deps.db, body, actor, { config: deps.config, requestIntent: requestIntent(ctx) }),
      ),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/refunds',
    auth: 'admin',
    tag,
    summary: 'List refunds in creation order, optionally of one payment',
    query: listRefundsQuery,
    responses: { 200: { description: 'Refunds', schema: z.array(refundResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) => listReply(ctx, await listRefunds(deps.db, query, query), serialiseRefund),
  }),
];
