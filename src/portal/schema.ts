import { z } from 'zod';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import { uuid, withoutControls } from '../http/schemas.ts';

/** Where the portal's `Back to <host>` leads: an absolute http(s) URL (tabs and newlines refused first, D-95). */
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

/** POST /api/billing/portal-sessions (P-1). */
export const adminPortalSessionBody = z
  .object({ customerId: uuid, returnUrl: returnUrl.optional() })
  .meta({ examples: [{ customerId: EXAMPLE_ID.customer, returnUrl: 'https://app.acme.example/account' }] });

/** POST /api/v1/portal-sessions (P-1): the API key's customer. */
export const v1PortalSessionBody = z
  .object({ returnUrl: returnUrl.optional() })
  .meta({ examples: [{ returnUrl: 'https://app.acme.example/account' }] });

export const portalSessionResponse = z.object({ url: z.string(), expiresAt: z.string() }).meta({
  examples: [
    {
      url: 'https://billing.example.com/portal/s/q3Zk9vR0bT2yH7cW5nL8pJ4sD6fA1gE3uK0oV9iBxYw',
      expiresAt: '2026-11-29T11:00:00.000Z',
    },
  ],
});
