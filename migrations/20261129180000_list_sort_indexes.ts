import type { Knex } from 'knex';

/**
 * Issue 34, the lists' speed on bench/console.ts's book (100,000 invoices, 93,000 payments, 10,000 customers).
 *
 * Sorts (C-15): the first page of a list sorted by a column without an index read and sorted every row (EXPLAIN
 * ANALYZE, one at a time on a quiet server: invoices by total 172 ms, by amount due 103 ms, by due date 78 ms;
 * payments by method 120 ms, by reference 134 ms, by amount 49 ms, by refunded 125 ms; customers by name 14 ms,
 * by company 11 ms). Each index is the sort's keyset, (column, created_at, id), with the very expression of the
 * repo's `*_SORTS` (invoices/repo-filters.ts AMOUNT_DUE_SQL), so a page and the next one are an index range
 * read either way. Number, status, created and received already had theirs; subscriptions (10,000, sorted in
 * 2-9 ms, the renewal sweep's hot table) get none.
 *
 * Search (C-15, D-23): a GIN index takes new entries into a pending list, merged only by (auto)vacuum; until then
 * every search reads the whole list, and the planner scans the table instead (10,000 customers just written:
 * 15 ms a search, against 0.4 ms once merged). Customers are written far less often than searched: the index is
 * kept merged at each write (fastupdate off) and merged now.
 *
 * The customer list's open amounts (every view, 50 customers): issued and overdue invoices of these customers were
 * found by ANDing the customer index with every open invoice of the status index (1.35 ms for 34 customers on
 * the book); a partial index of the open invoices by customer reads only theirs (0.45 ms).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create index invoices_total_sort on invoices (total, created_at, id);
    create index invoices_amount_due_sort on invoices ((case when status in ('paid', 'void') then 0
      else greatest(total - amount_paid - credit_applied - credited_amount, 0) end), created_at, id);
    create index invoices_due_date_sort on invoices ((coalesce(due_date, 'infinity'::timestamptz)), created_at, id);
    create index payments_method_sort on payments (payment_method, created_at, id);
    create index payments_reference_sort on payments ((coalesce(provider_reference, '')), created_at, id);
    create index payments_amount_sort on payments (amount, created_at, id);
    create index payments_refunded_sort on payments (refunded_amount, created_at, id);
    create index customers_name_sort on customers (lower(name), created_at, id);
    create index customers_company_sort on customers ((lower(coalesce(company, ''))), created_at, id);
    create index invoices_customer_open on invoices (customer_id, currency) where status in ('issued', 'overdue');
    alter index customers_search set (fastupdate = off);
    select gin_clean_pending_list('customers_search');
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter index customers_search reset (fastupdate);
    drop index if exists invoices_customer_open;
    drop index if exists customers_company_sort;
    drop index if exists customers_name_sort;
    drop index if exists payments_refunded_sort;
    drop index if exists payments_amount_sort;
    drop index if exists payments_reference_sort;
    drop index if exists payments_method_sort;
    drop index if exists invoices_due_date_sort;
    drop index if exists invoices_amount_due_sort;
    drop index if exists invoices_total_sort;
  `);
}
