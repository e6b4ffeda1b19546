import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import { createPaymentBody, listPaymentsQuery, paymentResponse, serialisePayment } from './schema.ts';
import { getPayment, listPayments, recordPayment } from './service.ts';

const tag = 'Payments';

export const paymentRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/payments',
    auth: 'admin',
    tag,
    summary: 'Record a payment on an issued or overdue invoice; the invoice becomes paid when nothing is left to pay',
    body: createPaymentBody,
    responses: {
      201: { description: 'Recorded', schema: paymentResponse },
      400: {
        description:
          'invalid_request, invalid_amount, invoice_not_found, amount_exceeds_due (amount not in (0, amount due])',
      },
      409: {
        description:
          'invoice_not_payable (draft or void), duplicate_payment (paymentMethod + providerReference seen before)',
      },
    },
    errors: ['invoice_not_found', 'invoice_not_payable', 'duplicate_payment', 'amount_exceeds_due', 'invalid_amount'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialisePayment(await recordPayment(deps.db, body, actor)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/payments',
    auth: 'admin',
    tag,
    summary: 'List payments in creation order, optionally of one invoice or customer',
    query: listPaymentsQuery,
    responses: { 200: { description: 'Payments', schema: z.array(paymentResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) =>
      listReply(ctx, await listPayments(deps.db, query, query), serialisePayment),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/payments/:id',
    auth: 'admin',
    tag,
    summary: 'Read one payment',
    params: idParams,
    responses: { 200: { description: 'Payment', schema: paymentResponse }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params }) => ({ body: serialisePayment(await getPayment(deps.db, params.id)) }),
  }),
];
