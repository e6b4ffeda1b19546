import { z } from 'zod';
import { notFound } from '../../errors.ts';
import { listReply } from '../../http/list-reply.ts';
import { requireCustomerScope } from '../../http/principal.ts';
import { defineRoute } from '../../http/route.ts';
import { idParams, pageQuery } from '../../http/schemas.ts';
import { INVOICE_STATUSES, invoiceResponse, serialiseInvoice } from '../schema.ts';
import { getInvoice, listInvoices } from '../service.ts';
import { pdfReply, pdfResponses } from './routes.ts';
import { getInvoicePdf } from './service.ts';

const tag = 'v1';

export function v1InvoicePdfPath(id: string): string {
  return `/api/v1/invoices/${id}/pdf`;
}

const listV1InvoicesQuery = pageQuery.extend({ status: z.enum(INVOICE_STATUSES).optional() });

// The customer always comes from the API key, never from the request (D-15); another customer's invoice
// is answered exactly like one that does not exist.
export const v1InvoiceRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/v1/invoices',
    auth: 'apiKey',
    tag,
    summary: "The invoices of the API key's customer, oldest first, optionally by status",
    query: listV1InvoicesQuery,
    responses: { 200: { description: 'Invoices', schema: z.array(invoiceResponse) } },
    errors: [],
    handler: async ({ deps, principal, query, ctx }) => {
      const page = await listInvoices(deps.db, query, { status: query.status, customerId: requireCustomerScope(principal) });
      return listReply(ctx, page, (r) => serialiseInvoice(r.invoice, r.lines, v1InvoicePdfPath(r.id)));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/invoices/:id',
    auth: 'apiKey',
    tag,
    summary: "One invoice of the API key's customer",
    params: idParams,
    responses: { 200: { description: 'Invoice', schema: invoiceResponse }, 404: { description: 'not_found, also for another customer\'s invoice' } },
    errors: [],
    handler: async ({ deps, principal, params }) => {
      const { invoice, lines } = await getInvoice(deps.db, params.id);
      if (invoice.customer_id !== requireCustomerScope(principal)) throw notFound('Invoice');
      return { body: serialiseInvoice(invoice, lines, v1InvoicePdfPath(invoice.id)) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/invoices/:id/pdf',
    auth: 'apiKey',
    tag,
    summary: "The PDF of one invoice of the API key's customer (as GET /api/billing/invoices/:id/pdf)",
    params: idParams,
    responses: pdfResponses,
    errors: [],
    handler: async ({ deps, principal, params }) => pdfReply(await getInvoicePdf(deps.db, params.id, { customerId: requireCustomerScope(principal) })),
  }),
];
