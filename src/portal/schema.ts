import { z } from 'zod';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import { returnUrl } from '../checkout/schema.ts';
import { uuid } from '../http/schemas.ts';

/**
 * A page of the portal a link or a sign-in leads to (deep links): `/portal` and the paths under it, segments of
 * letters, digits and hyphens, so never another site or another part of this one.
 */
const PORTAL_PAGE = /^\/portal(\/[A-Za-z0-9-]{1,64}){0,3}$/;

export const isPortalPagePath = (path: string) => PORTAL_PAGE.test(path);

const pagePath = z
  .string()
  .regex(PORTAL_PAGE, 'must be a page of the portal, such as /portal/subscriptions/<id>')
  .meta({
    description:
      'The portal page the link opens (default /portal): /portal/invoices, /portal/subscriptions/<id>, ' +
      '/portal/licenses/<id>, /portal/billing, ...',
  });

/** POST /api/billing/portal-sessions (P-1). */
export const adminPortalSessionBody = z
  .object({ customerId: uuid, returnUrl: returnUrl.optional(), path: pagePath.optional() })
  .meta({ examples: [{ customerId: EXAMPLE_ID.customer, returnUrl: 'https://app.acme.example/account' }] });

/** POST /api/v1/portal-sessions (P-1): the API key's customer. */
export const v1PortalSessionBody = z
  .object({ returnUrl: returnUrl.optional(), path: pagePath.optional() })
  .meta({ examples: [{ returnUrl: 'https://app.acme.example/account' }] });

export const portalSessionResponse = z.object({ url: z.string(), expiresAt: z.string() }).meta({
  examples: [
    {
      url: 'https://billing.example.com/portal/s/q3Zk9vR0bT2yH7cW5nL8pJ4sD6fA1gE3uK0oV9iBxYw',
      expiresAt: '2026-11-29T11:00:00.000Z',
    },
  ],
});
