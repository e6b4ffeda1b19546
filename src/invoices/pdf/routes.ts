import { z } from 'zod';
import type { Reply } from '../../http/route.ts';
import { defineRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import type { InvoicePdf } from './service.ts';
import { getInvoicePdf } from './service.ts';

const tag = 'Invoices';

export const renderingResponse = z
  .object({ status: z.literal('rendering') })
  .meta({ examples: [{ status: 'rendering' }] });

/** The PDF inline, or 202 "rendering" with Retry-After (D-53). */
export function pdfReply(result: InvoicePdf): Reply {
  if (result.kind === 'rendering') {
    return {
      status: 202,
      body: { status: 'rendering' },
      headers: { 'Retry-After': String(result.retryAfterSeconds), 'Cache-Control': 'no-store' },
    };
  }
  return {
    status: 200,
    body: result.pdf,
    headers: {
      'Content-Type': 'application/pdf',
      'Content-Disposition': `inline; filename="${result.filename}"`,
      // The same URL serves a new PDF once the invoice changes: a cache must ask again every time.
      'Cache-Control': 'private, no-cache',
    },
  };
}

export const pdfResponses = {
  200: { description: 'The invoice as a PDF document', contentType: 'application/pdf' },
  202: {
    description: 'Not rendered yet: the render is queued or running; ask again after Retry-After seconds',
    schema: renderingResponse,
  },
  404: { description: 'not_found' },
};

export const invoicePdfRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/billing/invoices/:id/pdf',
    auth: 'admin',
    tag,
    summary: "The invoice's PDF for its current content; rendered by the pdf worker and stored, waited for up to 10 s",
    params: idParams,
    responses: pdfResponses,
    errors: [],
    handler: async ({ deps, params }) => pdfReply(await getInvoicePdf(deps.db, params.id)),
  }),
];
