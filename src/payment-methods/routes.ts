import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import {
  createPaymentMethodBody,
  listPaymentMethodsQuery,
  paymentMethodResponse,
  serialisePaymentMethod,
} from './schema.ts';
import { createPaymentMethod, deletePaymentMethod, listPaymentMethods } from './service.ts';

const tag = 'Payment methods';

export const paymentMethodRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/payment-methods',
    auth: 'admin',
    tag,
    summary: "Store a provider's payment method for a customer; isDefault true makes it the only default",
    body: createPaymentMethodBody,
    responses: {
      201: { description: 'Stored', schema: paymentMethodResponse },
      400: { description: 'invalid_request, customer_not_found' },
      409: { description: 'duplicate_payment_method (same customer, type and providerMethodId)' },
    },
    errors: ['customer_not_found', 'duplicate_payment_method'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialisePaymentMethod(await createPaymentMethod(deps.db, body, actor)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/payment-methods',
    auth: 'admin',
    tag,
    summary: "List a customer's stored payment methods (customerId is required)",
    query: listPaymentMethodsQuery,
    responses: {
      200: { description: 'Payment methods', schema: z.array(paymentMethodResponse) },
      400: { description: 'invalid_request (customerId missing or not a UUID)' },
    },
    errors: [],
    handler: async ({ deps, query, ctx }) =>
      listReply(ctx, await listPaymentMethods(deps.db, query, query.customerId), serialisePaymentMethod),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/billing/payment-methods/:id',
    auth: 'admin',
    tag,
    summary: 'Remove a stored payment method',
    params: idParams,
    responses: { 204: { description: 'Removed' }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params, actor }) => {
      await deletePaymentMethod(deps.db, params.id, actor);
      return { status: 204 };
    },
  }),
];
