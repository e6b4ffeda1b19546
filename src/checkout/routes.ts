import { defineRoute } from '../http/route.ts';
import { checkoutResponse, providerACheckoutBody, providerBCheckoutBody } from './schema.ts';
import { startCheckout } from './service.ts';

const tag = 'Checkout';

const responses = {
  201: { description: 'The provider page to send the customer to', schema: checkoutResponse },
  400: { description: 'invalid_request, invoice_not_found' },
  409: { description: 'invoice_not_payable (not issued or overdue, or nothing due)' },
  502: { description: 'provider_error: the provider refused, failed or did not answer within 10 s' },
  503: {
    description: "provider_not_configured: the provider's secret key is not set (the message names the variable)",
  },
};
const errors = ['invoice_not_found', 'invoice_not_payable', 'provider_error', 'provider_not_configured'] as const;

export const checkoutRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/checkout/provider_a',
    auth: 'admin',
    tag,
    summary: "Start a provider_a hosted checkout session for an invoice's amount due",
    body: providerACheckoutBody,
    responses,
    errors,
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: await startCheckout(deps.db, deps.config, 'provider_a', body, actor),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/billing/checkout/provider_b',
    auth: 'admin',
    tag,
    summary: "Create a provider_b invoice (hosted payment page) for an invoice's amount due",
    body: providerBCheckoutBody,
    responses,
    errors,
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: await startCheckout(deps.db, deps.config, 'provider_b', body, actor),
    }),
  }),
];
