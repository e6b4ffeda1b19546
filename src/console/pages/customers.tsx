import { z } from 'zod';
import { CUSTOMER_TIERS } from '../../customers/schema.ts';
import { listCustomers, searchCustomers } from '../../customers/service.ts';
import { pagingQuery } from '../../http/schemas.ts';
import { money } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { definePage } from '../http/route.ts';

const PAGE_SIZE = 50;

const customersQuery = pagingQuery().extend({
  q: z.string().trim().max(200).optional(),
  tier: z.enum(CUSTOMER_TIERS).optional(),
});

/** `/admin/customers?q=&tier=` (console.md): newest first; `q` is the prefix search of /api/search/customers. */
export const customersPage = definePage({
  path: '/admin/customers',
  query: customersQuery,
  async render({ deps, query, viewer, notice }) {
    const { rows, hasMore } = query.q
      ? { rows: await searchCustomers(deps.db, query.q), hasMore: false }
      : await listCustomers(deps.db, { limit: PAGE_SIZE, startingAfter: query.startingAfter, newestFirst: true });
    const shown = query.tier ? rows.filter((c) => c.tier === query.tier) : rows;
    return (
      <Layout title="Customers" viewer={viewer} section="Customers" notice={notice}>
        <h1>Customers</h1>
        <form method="get" action="/admin/customers" class="filters">
          <p class="field"><label for="q">Search</label><input id="q" name="q" type="search" value={query.q ?? ''} /></p>
          <p class="field">
            <label for="tier">Tier</label>
            <select id="tier" name="tier">
              <option value="">Any</option>
              {CUSTOMER_TIERS.map((t) => <option value={t} selected={t === query.tier}>{t}</option>)}
            </select>
          </p>
          <button type="submit">Filter</button>
        </form>
        <Table
          rows={shown}
          empty="No customers match."
          next={nextPageUrl('/admin/customers', { q: query.q, tier: query.tier }, rows.at(-1)?.id, hasMore)}
          columns={[
            { header: 'Name', cell: (c) => <a href={`/admin/customers/${c.id}`}>{c.name}</a> },
            { header: 'Email', cell: (c) => c.email },
            { header: 'Company', cell: (c) => c.company ?? '' },
            { header: 'Tier', cell: (c) => c.tier ?? '' },
            { header: 'Credit balance', numeric: true, cell: (c) => money(c.creditBalance, 'USD') },
          ]}
        />
      </Layout>
    );
  },
});

export const customerRoutes = [customersPage];
