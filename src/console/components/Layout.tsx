import { NavList } from './NavList.tsx';
import type { ComponentChildren } from 'preact';
import { RefusalSummary, useRefusal } from './Refusal.tsx';

/** C-3: the navigation, exactly these texts. */
export const NAV = [
  { href: '/admin', text: 'Overview' },
  { href: '/admin/customers', text: 'Customers' },
  { href: '/admin/invoices', text: 'Invoices' },
  { href: '/admin/payments', text: 'Payments' },
  { href: '/admin/subscriptions', text: 'Subscriptions' },
  { href: '/admin/products', text: 'Products' },
  { href: '/admin/licenses', text: 'Licenses' },
  { href: '/admin/webhooks', text: 'Webhooks' },
  { href: '/admin/settings', text: 'Settings' },
  { href: '/admin/audit-log', text: 'Audit log' },
] as const;

export type Section = (typeof NAV)[number]['text'];

/** The nav entry a console path belongs to (the longest link it starts with), for pages that do not say. */
export function sectionOf(path: string): Section | undefined {
  const within = NAV.filter(
    (item) => path === item.href || (item.href !== '/admin' && path.startsWith(`${item.href}/`)),
  );
  return within.sort((a, b) => b.href.length - a.href.length)[0]?.text;
}

export interface Viewer {
  email: string;
  csrf: string;
}

export interface LayoutProps {
  title: string;
  viewer: Viewer;
  /** The nav entry to mark as current. */
  section?: Section;
  notice?: string;
  children: ComponentChildren;
}

/**
 * Every console page: title, navigation, one h1 (given by the page), a confirmation after an action, and
 * a refused action's summary first of all (its title says so too).
 */
export function Layout({ title, viewer, section, notice, children }: LayoutProps) {
  const refusal = useRefusal();
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${refusal ? 'Refused: ' : ''}${title} · Billing console`}</title>
        <link rel="stylesheet" href="/admin/assets/console.css" />
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/admin">
            Billing
          </a>
          <NavList label="Main" items={NAV} current={section} />
          <form class="search" method="get" action="/admin/search">
            <label class="visually-hidden" for="top-search">
              Search invoices, customers, licenses and payments
            </label>
            <input id="top-search" name="q" type="search" placeholder="Search" />
          </form>
          <form class="logout" method="post" action="/admin/logout">
            <input type="hidden" name="_csrf" value={viewer.csrf} />
            <span class="who">{viewer.email}</span> <button type="submit">Sign out</button>
          </form>
        </header>
        <main>
          {refusal ? <RefusalSummary error={refusal} /> : null}
          {notice ? (
            <p class="notice" role="status">
              {notice}
            </p>
          ) : null}
          {children}
        </main>
      </body>
    </html>
  );
}
