import { hostedUrlOf, hostedUrlsOf } from '../hosted-links.ts';
import { z } from 'zod';
import { listReply } from '../../http/list-reply.ts';
import { requireCustomerScope } from '../../http/principal.ts';
import { defineRoute } from '../../http/route.ts';
import { idParams, pageQuery } from '../../http/schemas.ts';
import { SENT_INVOICE_STATUSES } from '../customer-view.ts';
import { invoiceResponse, serialiseInvoice } from '../schema.ts';
import { getCustomerInvoice, listCustomerInvoices } from '../service.ts';
import { pdfReply, pdfResponses } from './routes.ts';
import { getInvoicePdf } from './service.ts';

const tag = 'v1';

export function v1InvoicePdfPath(id: string): string {
  return `/api/v1/invoices/${id}/pdf`;
}

const listV1InvoicesQuery = pageQuery.extend({ status: z.enum(SENT_INVOICE_STATUSES).optional() });

// The customer always comes from the API key, never from the request (D-15); another customer's invoice,
// and a draft (not yet sent), are answered exactly like one that does not exist (invoices/customer-view.ts).
export const v1InvoiceRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/v1/invoices',
    auth: 'apiKey',
    tag,
    summary: "The invoices sent to the API key's customer (drafts are not listed), oldest first, optionally by status",
    query: listV1InvoicesQuery,
    responses: { 200: { description: 'Invoices', schema: z.array(invoiceResponse) } },
    errors: [],
    handler: async ({ deps, principal, query, ctx }) => {
      const page = await listCustomerInvoices(deps.db, query, requireCustomerScope(principal), query.status);
      const urls = await hostedUrlsOf(
        deps.db,
        deps.config,
        page.rows.map((r) => r.invoice),
      );
      return listReply(ctx, page, (r) =>
        serialiseInvoice(r.invoice, r.lines, v1InvoicePdfPath(r.id), urls.get(r.invoice.id)),
      );
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/invoices/:id',
    auth: 'apiKey',
    tag,
    summary: "One invoice sent to the API key's customer",
    params: idParams,
    responses: {
      200: { description: 'Invoice', schema: invoiceResponse },
      404: { description: "not_found, also for another customer's invoice or a draft" },
    },
    errors: [],
    handler: async ({ deps, principal, params }) => {
      const { invoice, lines } = await getCustomerInvoice(deps.db, requireCustomerScope(principal), params.id);
      const hostedUrl = await hostedUrlOf(deps.db, deps.config, invoice);
      return { body: serialiseInvoice(invoice, lines, v1InvoicePdfPath(invoice.id), hostedUrl) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/invoices/:id/pdf',
    auth: 'apiKey',
    tag,
    summary:
      "The PDF of one invoice sent to the API key's customer (as GET /api/billing/invoices/:id/pdf); a draft's is " +
      'not found',
    params: idParams,
    responses: pdfResponses,
    errors: [],
    handler: async ({ deps, principal, params }) =>
      pdfReply(await getInvoicePdf(deps.db, params.id, { customerId: requireCustomerScope(principal) })),
  }),
];
