/**
 * The customer API. Its answers carry what other domains know of a customer (customer-view.ts), so it stands
 * here, above them; the writes are the customers domain's.
 */
import { z } from 'zod';
import { createCustomerBody, searchCustomersQuery, updateCustomerBody } from '../customers/schema.ts';
import { createCustomer, deleteCustomer, updateCustomer } from '../customers/service.ts';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams, pageQuery } from '../http/schemas.ts';
import {
  customerDetailResponse,
  customerWithProductsResponse,
  serialiseCustomer,
  serialiseCustomerDetail,
} from './customer-schema.ts';
import { customerRecord, getCustomer, listCustomers, newCustomerRecord, searchCustomers } from './customer-view.ts';

const tag = 'Customers';
const detail = async (...args: Parameters<typeof getCustomer>) => {
  const { customer, subscriptions } = await getCustomer(...args);
  return serialiseCustomerDetail(customer, subscriptions);
};

export const customerRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/customers',
    auth: 'admin',
    tag,
    summary: 'List customers in creation order, each with its products',
    query: pageQuery,
    responses: { 200: { description: 'Customers', schema: z.array(customerWithProductsResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) => listReply(ctx, await listCustomers(deps.db, query), serialiseCustomer),
  }),
  defineRoute({
    method: 'get',
    path: '/api/customers/:id',
    auth: 'admin',
    tag,
    summary: 'Read one customer with its products and subscriptions',
    params: idParams,
    responses: {
      200: { description: 'The customer', schema: customerDetailResponse },
      404: { description: 'not_found' },
    },
    errors: [],
    handler: async ({ deps, params }) => ({ body: await detail(deps.db, params.id) }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/customers',
    auth: 'admin',
    tag,
    summary: 'Create a customer; the email must be unused, case-insensitively',
    body: createCustomerBody,
    responses: {
      201: { description: 'Created', schema: customerWithProductsResponse },
      400: { description: 'invalid_request' },
      409: { description: 'email_taken, or clock_not_advanceable: the test clock is advancing' },
    },
    errors: ['email_taken', 'tax_rate_not_found', 'tax_rate_inactive', 'test_clock_not_found', 'clock_not_advanceable'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialiseCustomer(newCustomerRecord(await createCustomer(deps.db, body, actor))),
    }),
  }),
  defineRoute({
    method: 'put',
    path: '/api/customers/:id',
    auth: 'admin',
    tag,
    summary: 'Change the fields sent (null clears an optional one); the others stay as they are',
    params: idParams,
    body: updateCustomerBody,
    responses: {
      200: { description: 'The updated customer', schema: customerWithProductsResponse },
      400: { description: 'invalid_request' },
      404: { description: 'not_found' },
      409: { description: 'email_taken' },
    },
    errors: ['email_taken', 'tax_rate_not_found', 'tax_rate_inactive'],
    handler: async ({ deps, params, body, actor }) => ({
      body: serialiseCustomer(await customerRecord(deps.db, await updateCustomer(deps.db, params.id, body, actor))),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/customers/:id',
    auth: 'admin',
    tag,
    summary: 'Delete a customer without billing history',
    params: idParams,
    responses: {
      204: { description: 'Deleted' },
      404: { description: 'not_found' },
      409: { description: 'customer_has_billing_history, customer_in_use' },
    },
    errors: ['customer_has_billing_history', 'customer_in_use'],
    handler: async ({ deps, params, actor }) => {
      await deleteCustomer(deps.db, params.id, actor);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/search/customers',
    auth: 'admin',
    tag,
    summary:
      'Full-text search over name, email and company: every word matches as a prefix, best match first, at most 50',
    query: searchCustomersQuery,
    responses: {
      200: { description: 'Matching customers', schema: z.array(customerWithProductsResponse) },
      400: { description: 'invalid_request' },
    },
    errors: [],
    handler: async ({ deps, query }) => ({ body: (await searchCustomers(deps.db, query.q)).map(serialiseCustomer) }),
  }),
];
