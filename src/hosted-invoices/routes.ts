import { z } from 'zod';
import { defineRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import { replaceHostedLink } from '../invoices/hosted-links.ts';

export const hostedUrlResponse = z
  .object({ hostedUrl: z.string() })
  .meta({ examples: [{ hostedUrl: 'https://billing.example.com/i/Zk3v9Qm1xR0bT2yH7cW5nL8pJ4sD6fA1gE3uK0oV9iB' }] });

export const hostedInvoiceRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/invoices/:id/hosted-url',
    auth: 'admin',
    tag: 'Invoices',
    summary: "Replace the invoice's hosted page link (H-3): the old link stops working; answers the new one",
    params: idParams,
    responses: {
      200: { description: 'The new hosted page link', schema: hostedUrlResponse },
      404: { description: 'not_found' },
      409: { description: 'invalid_status_transition: a draft has no hosted page' },
    },
    errors: ['invalid_status_transition'],
    handler: async ({ deps, params, actor }) => ({
      body: { hostedUrl: await replaceHostedLink(deps.db, deps.config, params.id, actor) },
    }),
  }),
];
