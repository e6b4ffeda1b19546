import { z } from 'zod';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import { returnUrl } from '../checkout/schema.ts';
import { uuid } from '../http/schemas.ts';

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
