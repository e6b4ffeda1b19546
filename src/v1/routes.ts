import { z } from 'zod';
import { customerDetailResponse, serialiseCustomerDetail } from '../reporting/customer-schema.ts';
import { getCustomer } from '../reporting/customer-view.ts';
import { requireCustomerScope } from '../http/principal.ts';
import { v1InvoiceRoutes } from '../invoices/pdf/v1-routes.ts';
import { defineRoute } from '../http/route.ts';
import { listReply } from '../http/list-reply.ts';
import { licenseResponse, serialiseLicense } from '../licenses/schema.ts';
import { listLicenses } from '../licenses/service.ts';
import { pageQuery } from '../http/schemas.ts';
import { listProductsOfCustomer } from '../products/service.ts';
import { serialiseSubscription, subscriptionResponse } from '../subscriptions/schema.ts';
import { listSubscriptions } from '../subscriptions/service.ts';
import { serialiseV1Product, v1ProductResponse } from './schema.ts';

// Every v1 route reads the customer from the API key, never from the request (D-15).
export const v1Routes = [
  defineRoute({
    method: 'get',
    path: '/api/v1/customer',
    auth: 'apiKey',
    tag: 'v1',
    summary: "The API key's customer, with its products and subscriptions",
    responses: { 200: { description: 'The customer', schema: customerDetailResponse } },
    // The key's customer deleted (with its keys) between authentication and this read.
    errors: ['not_found'],
    handler: async ({ deps, principal }) => {
      const { customer, subscriptions } = await getCustomer(deps.db, requireCustomerScope(principal));
      return { body: serialiseCustomerDetail(customer, subscriptions) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/products',
    auth: 'apiKey',
    tag: 'v1',
    summary: "The products of the API key's customer: those of its licenses and of its subscriptions' plans",
    responses: { 200: { description: 'Products', schema: z.array(v1ProductResponse) } },
    errors: [],
    handler: async ({ deps, principal }) => ({
      body: (await listProductsOfCustomer(deps.db, requireCustomerScope(principal))).map(serialiseV1Product),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/licenses',
    auth: 'apiKey',
    tag: 'v1',
    summary: "The licenses of the API key's customer",
    query: pageQuery,
    responses: { 200: { description: 'Licenses', schema: z.array(licenseResponse) } },
    errors: [],
    handler: async ({ deps, principal, query, ctx }) => {
      const now = new Date();
      const page = await listLicenses(deps.db, query, { customerId: requireCustomerScope(principal) });
      return listReply(ctx, page, (row) => serialiseLicense(row, now));
    },
  }),
  ...v1InvoiceRoutes,
  defineRoute({
    method: 'get',
    path: '/api/v1/subscriptions',
    auth: 'apiKey',
    tag: 'v1',
    summary: "The subscriptions of the API key's customer",
    query: pageQuery,
    responses: { 200: { description: 'Subscriptions', schema: z.array(subscriptionResponse) } },
    errors: [],
    handler: async ({ deps, principal, query, ctx }) =>
      listReply(
        ctx,
        await listSubscriptions(deps.db, query, { customerId: requireCustomerScope(principal) }),
        serialiseSubscription,
      ),
  }),
];
