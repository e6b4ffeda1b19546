import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import { listPaymentsQuery, paymentResponse, serialisePayment } from './schema.ts';
import { getPayment, listPayments } from './service.ts';

const tag = 'Payments';

export const paymentRoutes = [
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
