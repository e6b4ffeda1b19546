/**
 * `/admin/search?q=` (C-15): one box in the top bar finds invoices by number, customers by name, email or company,
 * licenses by key and payments by provider reference; every result is a link to its page.
 */
import { z } from 'zod';
import { customerNames, searchCustomers } from '../../customers/service.ts';
import { findInvoicesByNumber } from '../../invoices/service.ts';
import { listLicenses } from '../../licenses/service.ts';
import { findPaymentsByReference } from '../../payments/service.ts';
import { money } from '../components/format.ts';
import { label } from '../components/labels.ts';
import { Layout } from '../components/Layout.tsx';
import { definePage } from '../http/route.ts';

const LIMIT = 20;

interface Found {
  href: string;
  text: string;
  detail: string;
}

function Results({ title, rows }: { title: string; rows: Found[] }) {
  return (
    <section>
      <h2>{`${title} (${rows.length})`}</h2>
      {rows.length === 0 ? (
        <p class="empty">{`No ${title.toLowerCase()} match.`}</p>
      ) : (
        <ul class="results">
          {rows.map((r) => (
            <li>
              <a href={r.href}>{r.text}</a> <span class="muted">{r.detail}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

async function search(db: Parameters<typeof searchCustomers>[0], q: string) {
  // Text with a space or other than letters, digits and dashes is no invoice number or license key: those
  // lookups are skipped (bench/console.ts: the search page's p99 aim is 100 ms on 10,000 customers).
  const keyLike = /^[A-Za-z0-9-]+$/.test(q);
  const [invoices, customers, licenses, payments] = await Promise.all([
    keyLike ? findInvoicesByNumber(db, q, LIMIT) : [],
    searchCustomers(db, q),
    keyLike ? listLicenses(db, { limit: LIMIT, newestFirst: true }, { q }) : { rows: [], hasMore: false },
    findPaymentsByReference(db, q, LIMIT),
  ]);
  const names = await customerNames(db, [
    ...invoices.map((i) => i.customer_id),
    ...licenses.rows.map((l) => l.customer_id),
    ...payments.map((p) => p.customer_id),
  ]);
  const nameOf = (id: string) => names.get(id) ?? '';
  return {
    invoices: invoices.map((i) => ({
      href: `/admin/invoices/${i.id}`,
      text: i.invoice_number,
      detail: `${nameOf(i.customer_id)} · ${label(i.status)} · ${money(i.total, i.currency)}`,
    })),
    customers: customers.slice(0, LIMIT).map((c) => ({
      href: `/admin/customers/${c.id}`,
      text: c.name,
      detail: [c.email, c.company].filter(Boolean).join(' · '),
    })),
    licenses: licenses.rows.map((l) => ({
      href: `/admin/licenses/${encodeURIComponent(l.license_key)}`,
      text: l.license_key,
      detail: `${nameOf(l.customer_id)} · ${label(l.status)}`,
    })),
    payments: payments.map((p) => ({
      href: `/admin/invoices/${p.invoice_id}`,
      text: p.provider_reference ?? '',
      detail: `${nameOf(p.customer_id)} · ${label(p.payment_method)} · ${money(p.amount, p.currency)}`,
    })),
  };
}

export const searchPage = definePage({
  path: '/admin/search',
  query: z.object({ q: z.string().trim().max(200).optional() }),
  async render({ deps, viewer, notice, query }) {
    const q = query.q ?? '';
    const found = q ? await search(deps.db, q) : undefined;
    return (
      <Layout title={q ? `Search: ${q}` : 'Search'} viewer={viewer} section="Overview" notice={notice}>
        <h1>Search</h1>
        <form method="get" action="/admin/search" class="filters">
          <p class="field">
            <label for="search-page-q">Invoice number, customer, license key or payment reference</label>
            <input id="search-page-q" name="q" type="search" value={q} />
          </p>
          <button type="submit">Search</button>
        </form>
        {found ? (
          <>
            <Results title="Invoices" rows={found.invoices} />
            <Results title="Customers" rows={found.customers} />
            <Results title="Licenses" rows={found.licenses} />
            <Results title="Payments" rows={found.payments} />
          </>
        ) : (
          <p class="empty">Type an invoice number (INV-2026-0042), a name, an email, a license key or a reference.</p>
        )}
      </Layout>
    );
  },
});

export const searchRoutes = [searchPage];
