import { servedOverHttps } from '../../http/cookies.ts';
import { createPortalLink } from '../../portal/sessions.ts';
import { uuidParam } from '../http/params.ts';
import { revealOnce } from '../http/reveal.ts';
import { defineAction } from '../http/route.ts';
import { customerPage } from './customer-detail.tsx';
import { PORTAL_LINK_FORM } from './customer-portal-link.tsx';

/** `POST /admin/customers/:id/portal-session`: POST /api/billing/portal-sessions's service; the link shown once. */
export const portalLinkAction = defineAction({
  path: '/admin/customers/:id/portal-session',
  form: PORTAL_LINK_FORM,
  page: customerPage,
  async run({ deps, ctx, params, actor }) {
    const customerId = uuidParam(params.id, 'Customer');
    const link = await createPortalLink(deps.db, deps.config, { customerId }, actor);
    revealOnce(ctx, servedOverHttps(ctx, deps.config), `${link.url} ${link.expiresAt.toISOString()}`);
    return { redirect: `/admin/customers/${customerId}#portal`, notice: 'Customer portal link created.' };
  },
});
