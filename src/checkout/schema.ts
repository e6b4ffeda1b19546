import { z } from 'zod';
import { uuid, withoutControls } from '../http/schemas.ts';

// The URL parser drops tabs and newlines silently: they are refused before it sees them (D-95).
const returnUrl = withoutControls(z.string().max(2048, 'must be at most 2048 characters'))
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' || url.protocol === 'http:';
    } catch {
      return false;
    }
  }, 'must be an absolute http or https URL')
  .meta({ format: 'uri' });

export const providerACheckoutBody = z.object({ invoiceId: uuid, successUrl: returnUrl, cancelUrl: returnUrl });
export const providerBCheckoutBody = z.object({ invoiceId: uuid, successUrl: returnUrl });

export const checkoutResponse = z.object({ provider: z.enum(['provider_a', 'provider_b']), id: z.string(), url: z.string(), invoiceId: z.uuid() });
