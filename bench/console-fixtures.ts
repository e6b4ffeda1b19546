/**
 * The console benchmark's book (C-9): 10,000 customers and 100,000 invoices over the past year, with a line
 * each, payments on the paid ones and a subscription per customer, generated set-wise in PostgreSQL (a few
 * seconds; going through the services would take many minutes and measure nothing the page does).
 */
import type { Knex } from 'knex';

export const CONSOLE_CUSTOMERS = 10_000;
export const CONSOLE_INVOICES = 100_000;

/** Adds customers up to CONSOLE_CUSTOMERS (after bench/fixtures.ts's), subscriptions, invoices, lines and payments. */
export async function seedConsoleBook(knex: Knex, existingCustomers: number, planIds: string[]): Promise<void> {
  await knex.raw(
    `insert into customers (name, email, company, tier, created_at)
     select 'Console Customer ' || g, 'console-' || g || '@bench.test', 'Company ' || (g % 400),
            (array['starter', 'professional', 'enterprise'])[1 + g % 3], now() - (g % 365) * interval '1 day'
       from generate_series(1, ?) as g`,
    [CONSOLE_CUSTOMERS - existingCustomers],
  );
  // Every customer's one subscription, mostly active, on the bench plans (monthly, 29.00 USD).
  await knex.raw(
    `insert into subscriptions (customer_id, plan_id, status, billing_cycle, billing_anchor, period_number,
      current_period_start, current_period_end, created_at)
     select c.id, (?::uuid[])[1 + (c.n % ?)],
            case when c.n % 20 = 0 then 'trialing' when c.n % 20 = 1 then 'canceled' when c.n % 20 = 2 then 'paused'
              else 'active' end,
            'monthly', c.start, 0, c.start, c.start + interval '1 month', c.start
       from (select id, row_number() over (order by id) as n, now() - (random() * 28) * interval '1 day' as start
         from customers) as c`,
    [planIds, planIds.length],
  );
  // Invoices spread evenly over 365 days, numbered per year in date order (D-50), newest ones still open.
  await knex.raw(
    `with numbered as (select id, row_number() over (order by id) - 1 as n from customers),
     generated as (
       select g, now() - ((? - g)::numeric / ?) * interval '365 days' as at, (29 + (g % 7) * 10)::numeric as total,
              case when g % 10 = 0 then 'EUR' else 'USD' end as currency, (g * 7919) % (select count(*) from customers)
                as customer_n
         from generate_series(1, ?) as g
     ),
     dated as (
       select *, case when at > now() - interval '14 days' then 'issued' when g % 50 = 0 then 'overdue' when g % 97 = 0
         then 'void' else 'paid' end as status
         from generated
     )
     insert into invoices (customer_id, invoice_number, status, currency, subtotal, tax_amount, total, amount_paid,
                           due_date, issued_at, paid_at, overdue_at, voided_at, created_at, updated_at)
     select numbered.id,
            'INV-' || extract(year from at)::int || '-' || lpad((row_number() over (partition by extract(year from at)
              order by g))::text, 6, '0'),
            status, currency, total, 0, total, case when status = 'paid' then total else 0 end,
            at + interval '14 days', at, case when status = 'paid' then at + interval '5 days' end,
            case when status = 'overdue' then at + interval '15 days' end, case when status = 'void'
              then at + interval '1 day' end, at, at
       from dated join numbered on numbered.n = dated.customer_n`,
    [CONSOLE_INVOICES, CONSOLE_INVOICES, CONSOLE_INVOICES],
  );
  await knex.raw(
    `insert into invoice_line_items (invoice_id, position, description, quantity, unit_price, amount)
     select id, 1, 'Bench subscription', 1, total, total from invoices`,
  );
  await knex.raw(
    `insert into payments (invoice_id, customer_id, amount, currency, payment_method, received_at, created_at)
     select id, customer_id, total, currency, 'bank_transfer', paid_at, paid_at from invoices where status = 'paid'`,
  );
  // Later creations continue the numbering where the bulk insert left it.
  await knex.raw(
    `insert into document_counters (kind, year, last_seq)
     select 'INV', extract(year from created_at)::int, count(*) from invoices group by 2
     on conflict (kind, year) do update set last_seq = excluded.last_seq`,
  );
  await knex.raw('analyze customers, subscriptions, invoices, invoice_line_items, payments');
}
