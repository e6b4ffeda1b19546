import { requireCustomerScope } from '../http/principal.ts';
import { defineRoute } from '../http/route.ts';
import { adminPortalSessionBody, portalSessionResponse, v1PortalSessionBody } from './schema.ts';
import { createPortalLink, type PortalLink } from './sessions.ts';

const reply = (link: PortalLink) => ({
  status: 201,
  body: { url: link.url, expiresAt: link.expiresAt.toISOString() },
});

// P-1: a link valid an hour and once; the app redirects its user there (README, "The customer portal").
export const portalRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/portal-sessions',
    auth: 'admin',
    tag: 'Customers',
    summary:
      "A customer portal sign-in link (P-1) for a customer: valid an hour and once; `returnUrl` is its 'Back to'",
    body: adminPortalSessionBody,
    responses: {
      201: { description: 'The link to send the customer to', schema: portalSessionResponse },
      400: { description: 'invalid_request, customer_not_found' },
    },
    errors: ['customer_not_found'],
    handler: async ({ deps, body, actor }) => reply(await createPortalLink(deps.db, deps.config, body, actor)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/portal-sessions',
    auth: 'apiKey',
    tag: 'v1',
    summary: "A customer portal sign-in link (P-1) for the API key's customer: valid an hour and once",
    body: v1PortalSessionBody,
    responses: { 201: { description: 'The link to redirect the user to', schema: portalSessionResponse } },
    // The key's customer deleted (with its keys) between authentication and this write.
    errors: ['customer_not_found'],
    handler: async ({ deps, body, actor, principal }) =>
      reply(
        await createPortalLink(deps.db, deps.config, { customerId: requireCustomerScope(principal), ...body }, actor),
      ),
  }),
];
