/**
 * The portal's layout (P-3, K-2): the company's name, the navigation (exactly the spec's texts), `Back to <host>` when
 * the session came with a returnUrl, and Sign out. Styled by the customer-facing base (the hosted page's stylesheet)
 * and the portal's own few rules; no script.
 */
import { NavList } from '../console/components/NavList.tsx';
import type { ComponentChildren } from 'preact';
import { HOSTED_STYLESHEET_PATH } from '../hosted-invoices/page.tsx';
import type { PortalViewer } from './viewer.ts';

export const PORTAL_STYLESHEET_PATH = '/portal/assets/portal.css';

export const PORTAL_NAV = [
  { href: '/portal', text: 'Overview' },
  { href: '/portal/invoices', text: 'Invoices' },
  { href: '/portal/subscriptions', text: 'Subscriptions' },
  { href: '/portal/licenses', text: 'Licenses' },
  { href: '/portal/billing', text: 'Billing details' },
] as const;

export type PortalSection = (typeof PORTAL_NAV)[number]['text'];

/** `Back to <host>`: the host of the app that sent the customer here. */
export function backText(returnUrl: string): string {
  return `Back to ${new URL(returnUrl).host}`;
}

function Head({ title, companyName }: { title: string; companyName: string }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="robots" content="noindex" />
      <title>{`${title} · ${companyName}`}</title>
      <link rel="stylesheet" href={HOSTED_STYLESHEET_PATH} />
      <link rel="stylesheet" href={PORTAL_STYLESHEET_PATH} />
    </head>
  );
}

export function PortalLayout({
  title,
  viewer,
  section,
  notice,
  children,
}: {
  title: string;
  viewer: PortalViewer;
  section?: PortalSection;
  notice?: string | undefined;
  children: ComponentChildren;
}) {
  return (
    <html lang="en">
      <Head title={title} companyName={viewer.company.name} />
      <body class="portal">
        <header class="portal-top">
          <div class="portal-brand">
            <strong>{viewer.company.name}</strong>
            <span class="muted">{viewer.customerName}</span>
          </div>
          <div class="portal-session">
            {viewer.returnUrl ? <a href={viewer.returnUrl}>{backText(viewer.returnUrl)}</a> : null}
            <form method="post" action="/portal/logout">
              <input type="hidden" name="_csrf" value={viewer.csrf} />
              <button type="submit" class="link-button">
                Sign out
              </button>
            </form>
          </div>
          <NavList label="Portal" items={PORTAL_NAV} current={section} />
        </header>
        <main>
          {notice ? (
            <p class="done" role="status">
              {notice}
            </p>
          ) : null}
          {children}
        </main>
        <PortalFooter company={viewer.company} />
      </body>
    </html>
  );
}

function PortalFooter({ company }: { company: PortalViewer['company'] }) {
  return (
    <footer class="portal-footer">
      {company.name}
      {company.email ? ` · Questions? Write to ${company.email}` : ''}
    </footer>
  );
}

/** A page for someone not signed in: sign-in forms, an invalid link. */
export function PublicLayout({
  title,
  companyName,
  children,
}: {
  title: string;
  companyName: string;
  children: ComponentChildren;
}) {
  return (
    <html lang="en">
      <Head title={title} companyName={companyName} />
      <body class="portal">
        <header class="portal-top">
          <div class="portal-brand">
            <strong>{companyName}</strong>
            <span class="muted">Customer portal</span>
          </div>
        </header>
        <main>{children}</main>
      </body>
    </html>
  );
}
