/**
 * C-15 on a large book (issue 34): every column a money list or the customer list sorts by has an index in the
 * sort's keyset order (migration 20261129180000), so the first page is an index range, never a sort of every
 * row. Asked of the planner with sorting priced out (enable_sort off): a sort that no index serves still shows a
 * full Sort node; an Incremental Sort after a unique index (the number, the email) is a sort of equal keys only.
 */
import test from 'ava';
import type { Knex } from 'knex';
import { CUSTOMER_SORT_KEYS, findCustomers } from '../../src/customers/service.ts';
import { findInvoicesByNumber, INVOICE_SORT_KEYS, listInvoiceSummaries } from '../../src/invoices/service.ts';
import { listPayments, PAYMENT_SORT_KEYS } from '../../src/payments/service.ts';
import type { PageQuery } from '../../src/db/paginate.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let database: TestDatabase;
test.before(async () => {
  database = await createTestDatabase();
});
test.after.always(async () => database?.drop());

const lists: [string, readonly string[], (db: Knex.Transaction, page: PageQuery) => Promise<unknown>][] = [
  ['invoices', INVOICE_SORT_KEYS, (db, page) => listInvoiceSummaries(db, page, {})],
  ['payments', PAYMENT_SORT_KEYS, (db, page) => listPayments(db, page, {})],
  ['customers', CUSTOMER_SORT_KEYS, (db, page) => findCustomers(db, page, {})],
];

/** The plan of the statement `read` sends for its page, with sorts and table scans priced out. */
async function planOf(read: (db: Knex.Transaction) => Promise<unknown>): Promise<string> {
  const knex = database.knex;
  return knex.transaction(async (trx) => {
    await trx.raw('set local enable_sort = off');
    await trx.raw('set local enable_seqscan = off');
    const selects: { sql: string; bindings: readonly unknown[] }[] = [];
    const seen = (q: { sql: string; bindings?: readonly unknown[] }) => {
      if (/^select /i.test(q.sql)) selects.push({ sql: q.sql, bindings: q.bindings ?? [] });
    };
    knex.on('query', seen);
    try {
      await read(trx);
    } finally {
      knex.off('query', seen);
    }
    const sent = selects.at(-1)!;
    // The event's text has pg's $1, $2 in order; raw takes `?`.
    const sql = sent.sql.replace(/\$\d+/g, '?');
    const { rows } = await trx.raw(`explain ${sql}`, sent.bindings as Knex.RawBinding[]);
    return (rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
  });
}

for (const [list, keys, read] of lists) {
  // Serial: the statement is caught by the knex instance's query event, which every test of the file would feed.
  test.serial(`every sort of the ${list} list reads an index, either way`, async (t) => {
    t.true(keys.length > 0);
    for (const key of keys) {
      for (const descending of [false, true]) {
        const plan = await planOf((db) => read(db, { limit: 50, newestFirst: true, sort: { key, descending } }));
        t.notRegex(plan, /(^|->\s+)Sort\b/m, `${list} sorted by ${descending ? '-' : ''}${key}:\n${plan}`);
      }
    }
  });
}

test('the customer search index takes new customers at once (no pending list to read at each search)', async (t) => {
  const { rows } = await database.knex.raw(`select reloptions from pg_class where relname = 'customers_search'`);
  t.deepEqual(rows[0].reloptions, ['fastupdate=off']);
});

test("an invoice number's beginning is a range of the numbers' unique index (collation C)", async (t) => {
  // The search (findInvoicesByNumber) filters by `invoice_number like 'PREFIX%'`; without the C collation only a
  // text_pattern_ops index, maintained by every invoice insert, made that a range.
  const plan = await database.knex.transaction(async (trx) => {
    await trx.raw('set local enable_seqscan = off');
    const { rows } = await trx.raw(`explain select id from invoices where invoice_number like 'INV-2026-00%'`);
    return (rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
  });
  t.regex(plan, /invoices_invoice_number_key/, plan);
  t.regex(plan, /invoice_number >= 'INV-2026-00'::text/, plan);
  t.deepEqual(await findInvoicesByNumber(database.knex, 'inv-2026-00', 10), []);
});
