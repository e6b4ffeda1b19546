/**
 * Issue 20: a draft invoice naming its tax rate is one query whose numbering statement is prepared once per
 * connection and executed after (db/hot-lock.ts aloneHotLock). The plan must be used again on the same
 * connection, and a connection that lost it (DISCARD ALL, a new session) or that failed a creation must keep
 * creating invoices with gapless numbers.
 */
import test from 'ava';
import type { Knex } from 'knex';
import pg from 'pg';
import { SYSTEM_ACTOR } from '../../src/audit/actor.ts';
import { createKnex } from '../../src/db/knex.ts';
import { quoted } from '../../src/db/literal.ts';
import { createInvoice } from '../../src/invoices/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { line } from './fixtures.ts';

let database: TestDatabase;
/** One connection: what a creation prepares is what the next one finds. */
let one: Knex;
let customerId: string;
test.before(async () => {
  database = await createTestDatabase();
  one = createKnex(database.url, 1);
  customerId = (await insertCustomer(database.knex)).id;
});
test.after.always(async () => {
  await one?.destroy();
  await database?.drop();
});

const draft = (customer = customerId) => ({
  customerId: customer,
  currency: 'USD',
  status: 'draft' as const,
  taxRate: '10',
  lineItems: [line('10.00', 2, 'prepared?')],
});
const create = (db: Knex, customer?: string) => createInvoice(db, draft(customer), SYSTEM_ACTOR);
const seq = (detail: { invoice: { invoice_number: string } }) => Number(detail.invoice.invoice_number.split('-')[2]);

async function preparedHere(): Promise<{ name: string; calls: number }[]> {
  const result = await one.raw(
    `select name, generic_plans + custom_plans as calls from pg_prepared_statements where name like 'billing\\_hot\\_%'`,
  );
  return result.rows.map((r: { name: string; calls: string | number }) => ({ name: r.name, calls: Number(r.calls) }));
}

test.serial('the numbering statement is prepared once on a connection and executed again there', async (t) => {
  const a = await create(one);
  const b = await create(one);
  const c = await create(one);
  t.deepEqual([seq(b), seq(c)], [seq(a) + 1, seq(a) + 2]);
  t.regex(c.invoice.total, /^22(\.0+)?$/, 'priced with its 10% tax');
  t.deepEqual(
    c.lines.map((l) => l.description),
    ['prepared?'],
  );
  const prepared = await preparedHere();
  t.is(prepared.length, 1, 'one prepared text for one kind of creation');
  t.is(prepared[0]!.calls, 3, 'the three creations ran the one prepared statement');
});

test.serial(
  'a connection that lost its prepared statement (DISCARD ALL) prepares it again, and numbers stay gapless',
  async (t) => {
    const before = await create(one);
    await one.raw('DISCARD ALL');
    t.deepEqual(await preparedHere(), []);
    const after = await create(one);
    t.is(seq(after), seq(before) + 1);
    const prepared = await preparedHere();
    t.is(prepared.length, 1);
    t.is(prepared[0]!.calls, 1);
    const [counted] = await database
      .knex('audit_log')
      .where({ target_type: 'invoice', target_id: after.invoice.id })
      .count<{ n: string }[]>('* as n');
    t.is(Number(counted?.n), 1, 'the retried creation wrote one audit row');
  },
);

test.serial(
  'a refused creation leaves the connection able to execute the prepared statement, and gives its number back',
  async (t) => {
    const before = await create(one);
    await t.throwsAsync(create(one, '00000000-0000-4000-8000-00000000beef'), { message: /customer/i });
    const after = await create(one);
    t.is(seq(after), seq(before) + 1);
    t.is((await preparedHere()).length, 1);
  },
);

test.serial('a new connection (another pool) prepares its own and numbers with the others', async (t) => {
  const other = createKnex(database.url, 1);
  try {
    const a = await create(one);
    const b = await create(other);
    const c = await create(one);
    t.deepEqual([seq(b), seq(c)], [seq(a) + 1, seq(a) + 2]);
  } finally {
    await other.destroy();
  }
});

test('literals are quoted exactly as pg.escapeLiteral quotes them, with or without quotes and backslashes', async (t) => {
  const texts = [
    '',
    'plain',
    '{"a":"b"}',
    "O'Brien",
    "''",
    '\\',
    'a\\b',
    "\\'",
    "E'x'",
    'é ✓ \u2028 \n\t',
    '"quoted \\" json"',
    '$1::text',
  ];
  for (const text of texts) t.is(quoted(text), pg.escapeLiteral(text), JSON.stringify(text));
  // And PostgreSQL reads each back as it was.
  const [row] = (await one.raw(`select array[${texts.map(quoted).join(', ')}]::text[] as back`)).rows;
  t.deepEqual(row.back, texts);
});
