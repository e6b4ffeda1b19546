/** Rows every benchmark can use, inserted straight into the bench database before anything is measured. */
import type { Knex } from 'knex';

const PRODUCTS = 1000;
const CUSTOMERS = 1000;
/** Monthly invoices of last year per seeded customer (seedHistory). */
const HISTORY_MONTHS = 12;

/** `history`: last year's business as well (seedHistory); the console bench seeds its own book instead. */
export async function seedRows(
  knex: Knex,
  options: { history?: boolean } = {},
): Promise<{ productIds: string[]; customerIds: string[]; planIds: string[]; taxRateIds: string[] }> {
  const products = Array.from({ length: PRODUCTS }, (_, i) => ({
    name: `Bench Product ${i + 1}`,
    product_type: ['licensed', 'saas', 'api'][i % 3]!,
    description: 'Seeded by bench/fixtures.ts',
    price: `${(i % 100) + 1}.00`,
    currency: 'USD',
  }));
  const customers = Array.from({ length: CUSTOMERS }, (_, i) => ({
    name: `Seeded Customer ${i + 1}`,
    email: `seeded-${i + 1}@bench.test`,
    company: `Company ${i % 50}`,
    tier: ['starter', 'professional', 'enterprise'][i % 3]!,
  }));
  // One statement each: 1000 rows stay far below PostgreSQL's 65535 bind parameters.
  const productRows: Array<{ id: string }> = await knex('products').insert(products).returning('id');
  const customerRows: Array<{ id: string }> = await knex('customers').insert(customers).returning('id');
  const plans = productRows.slice(0, 10).map((p, i) => ({
    product_id: p.id,
    name: `Bench Plan ${i + 1}`,
    pricing_model: 'flat',
    billing_cycle: 'monthly',
    base_price: '29.00',
    currency: 'USD',
  }));
  const planRows: Array<{ id: string }> = await knex('plans').insert(plans).returning('id');
  // Two exclusive rates, as a US state and city tax or a VAT with a levy (issue 38's bench).
  const taxRateRows: Array<{ id: string }> = await knex('tax_rates')
    .insert([
      { name: 'Bench State', percentage: '6.25' },
      { name: 'Bench City', percentage: '2' },
    ])
    .returning('id');
  if (options.history !== false)
    await seedHistory(
      knex,
      customerRows.map((r) => r.id),
      planRows.map((r) => r.id),
    );
  // Fresh statistics, so the planner uses the primary key from the first request on.
  await knex.raw('analyze products, customers, plans, subscriptions, invoices, invoice_line_items');
  return {
    productIds: productRows.map((r) => r.id),
    customerIds: customerRows.map((r) => r.id),
    planIds: planRows.map((r) => r.id),
    taxRateIds: taxRateRows.map((r) => r.id),
  };
}

/**
 * Last year's business: one canceled monthly subscription per customer with its twelve paid invoices of two lines
 * each, numbered by the service's format for last year (this year's counter is untouched). The writes measured are
 * those of a service
 * in use, not of its first minute: on tables that start empty and grow by thousands of rows a second, PostgreSQL's
 * cached plans of the foreign-key checks (an invoice line's to its invoice, an invoice's to its subscription) are
 * made while the table is a page or two and stay sequential scans until autovacuum first analyzes it (a minute or
 * more, longer than a benchmark). perf showed half of the backends' CPU in those scans in such runs (issue 20).
 */
async function seedHistory(knex: Knex, customerIds: string[], planIds: string[]): Promise<void> {
  const year = new Date().getUTCFullYear() - 1;
  await knex.raw(
    `with s as (
       insert into subscriptions (customer_id, plan_id, status, billing_cycle, billing_anchor, period_number,
         current_period_start, current_period_end, canceled_at, created_at)
       select c.id, (?::uuid[])[1 + (c.n - 1) % cardinality(?::uuid[])], 'canceled', 'monthly', make_timestamptz(?, 1,
         1, 0, 0, 0, 'UTC'), ? - 1,
              make_timestamptz(?, 12, 1, 0, 0, 0, 'UTC'), make_timestamptz(? + 1, 1, 1, 0, 0, 0, 'UTC'),
                make_timestamptz(? + 1, 1, 1, 0, 0, 0, 'UTC'), make_timestamptz(?, 1, 1, 0, 0, 0, 'UTC')
         from unnest(?::uuid[]) with ordinality as c(id, n)
       returning id, customer_id
     ), i as (
       insert into invoices (customer_id, subscription_id, invoice_number, status, currency, tax_rate, subtotal,
         tax_amount, total, amount_paid,
                             due_date, issued_at, paid_at, period_start, period_end, created_at)
       select s.customer_id, s.id,
              'INV-' || ?::text || '-' ||
                lpad((row_number() over w)::text, greatest(4, length((row_number() over w)::text)), '0'),
              'paid', 'USD', 0, 29, 0, 29, 29,
              p.start + interval '14 days', p.start, p.start + interval '1 day', p.start, p.start + interval '1 month',
                p.start
         from s cross join generate_series(1, ?) as m(month)
         cross join lateral (select make_timestamptz(?, m.month, 1, 0, 0, 0, 'UTC') as start) p
       window w as (order by m.month, s.id)
       returning id
     ), l as (
       insert into invoice_line_items (invoice_id, position, description, quantity, unit_price, amount)
       select i.id, n, case n when 1 then 'Bench plan' else 'Bench extra seats' end, 1, 14.50, 14.50 from i cross
         join generate_series(1, 2) as n
     )
     insert into document_counters (kind, year, last_seq) select 'INV', ?, count(*) from i`,
    [planIds, planIds, year, HISTORY_MONTHS, year, year, year, year, customerIds, year, HISTORY_MONTHS, year, year],
  );
}
