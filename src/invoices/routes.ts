import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import {
  createInvoiceBody,
  invoiceResponse,
  listInvoicesQuery,
  serialiseInvoice,
  updateInvoiceBody,
} from './schema.ts';
import { setInvoiceStatus } from '../settlement/service.ts';
import { createAdminInvoice } from '../settlement/admin-invoice.ts';
import { getInvoice, listInvoices } from './service.ts';
import { hostedUrlOf, hostedUrlsOf } from './hosted-links.ts';

const tag = 'Invoices';

export const invoiceRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/billing/invoices',
    auth: 'admin',
    tag,
    summary: 'List invoices, optionally by status and customer',
    query: listInvoicesQuery,
    responses: { 200: { description: 'Invoices', schema: z.array(invoiceResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) => {
      const page = await listInvoices(deps.db, query, query);
      const urls = await hostedUrlsOf(
        deps.db,
        deps.config,
        page.rows.map((r) => r.invoice),
      );
      return listReply(ctx, page, (r) => serialiseInvoice(r.invoice, r.lines, undefined, urls.get(r.invoice.id)));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/billing/invoices',
    auth: 'admin',
    tag,
    summary: 'Create an invoice (draft unless status is issued) with a number INV-{YEAR}-{SEQ}',
    body: createInvoiceBody,
    responses: {
      201: { description: 'Created', schema: invoiceResponse },
      400: { description: 'invalid_request, customer_not_found, subscription_not_found' },
    },
    errors: ['customer_not_found', 'subscription_not_found', 'tax_rate_not_found', 'tax_rate_inactive'],
    handler: async ({ deps, body, actor }) => {
      const { invoice, lines } = await createAdminInvoice(deps.db, body, actor, { settings: deps.config });
      return {
        status: 201,
        body: serialiseInvoice(invoice, lines, undefined, await hostedUrlOf(deps.db, deps.config, invoice)),
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/invoices/:id',
    auth: 'admin',
    tag,
    summary: 'Read one invoice',
    params: idParams,
    responses: { 200: { description: 'Invoice', schema: invoiceResponse }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params }) => {
      const { invoice, lines } = await getInvoice(deps.db, params.id);
      return { body: serialiseInvoice(invoice, lines, undefined, await hostedUrlOf(deps.db, deps.config, invoice)) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/billing/invoices/:id',
    auth: 'admin',
    tag,
    summary:
      'Change the status: draft->issued|void, issued->paid|void, overdue->paid|void; marking paid records ' +
      'a manual payment of the amount due (C-12)',
    params: idParams,
    body: updateInvoiceBody,
    responses: {
      200: { description: 'Invoice', schema: invoiceResponse },
      404: { description: 'not_found' },
      409: { description: 'invalid_status_transition' },
    },
    errors: ['invalid_status_transition', 'invoice_has_payments'],
    handler: async ({ deps, params, body, actor }) => {
      const { invoice, lines } = await setInvoiceStatus(
        deps.db,
        params.id,
        body.status,
        actor,
        { settings: deps.config },
        body.note ?? null,
      );
      return { body: serialiseInvoice(invoice, lines, undefined, await hostedUrlOf(deps.db, deps.config, invoice)) };
    },
  }),
];
