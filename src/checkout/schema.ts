import { z } from 'zod';
import { uuid, withoutControls } from '../http/schemas.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

// The URL parser drops tabs and newlines silently: they are refused before it sees them (D-95).
export const returnUrl = withoutControls(z.string().max(2048, 'must be at most 2048 characters'))
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' || url.protocol === 'http:';
    } catch {
      return false;
    }
  }, 'must be an absolute http or https URL')
  .meta({ format: 'uri' });

export const providerACheckoutBody = z.object({ invoiceId: uuid, successUrl: returnUrl, cancelUrl: returnUrl }).meta({
  examples: [
    {
      invoiceId: EXAMPLE_ID.invoice,
      successUrl: 'https://app.acme.example/billing/paid',
      cancelUrl: 'https://app.acme.example/billing',
    },
  ],
});
export const providerBCheckoutBody = z
  .object({ invoiceId: uuid, successUrl: returnUrl })
  .meta({ examples: [{ invoiceId: EXAMPLE_ID.invoice, successUrl: 'https://app.acme.example/billing/paid' }] });

export const checkoutResponse = z
  .object({ provider: z.enum(['provider_a', 'provider_b']), id: z.string(), url: z.string(), invoiceId: z.uuid() })
  .meta({
    examples: [
      {
        provider: 'provider_a',
        id: 'cs_a1b2c3d4e5',
        url: 'https://checkout.provider-a.example/pay/cs_a1b2c3d4e5',
        invoiceId: EXAMPLE_ID.invoice,
      },
    ],
  });
