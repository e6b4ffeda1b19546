/**
 * Gapless and unique numbers (D-50) when the counter is taken late, by the statement that writes the invoices:
 * creations of invoices and subscriptions run at once with creations that fail after taking their
 * number (a forced rollback, an unknown customer refused by the very statement that numbers, a session killed
 * while it holds the counter). Every number a failed creation saw comes back and is used by a later one.
 */
import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createKnex } from '../../src/db/knex.ts';
import { createInvoice } from '../../src/invoices/service.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import { line } from './fixtures.ts';

let app: TestApp;
test.before(async () => {
  app = await startTestApp();
});
test.after.always(async () => app?.close());

const YEAR = 2045;
const now = new Date(`${YEAR}-05-01T12:00:00Z`);
const seqOf = (n: string) => Number(n.split('-')[2]);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

test(
  'concurrent creations mixed with rollbacks, ' + 'refusals and a killed session leave the numbers gapless and unique',
  async (t) => {
    const customers = await Promise.all(Array.from({ length: 5 }, () => insertCustomer(app.db)));
    const plan = await makePlan(app.db, '12.00');
    const input = (i: number) => ({
      customerId: customers[i % customers.length]!.id,
      lineItems: [line('3.00')],
      currency: 'USD',
      status: (i % 2 ? 'issued' : 'draft') as 'issued' | 'draft',
    });
    const seenByFailures: string[] = [];

    const committed = async (i: number) =>
      (await createInvoice(app.db, input(i), SYSTEM_ACTOR, { now })).invoice.invoice_number;
    const subscribed = async (i: number) => {
      await createSubscription(
        app.db,
        { customerId: customers[i % customers.length]!.id, planId: plan.id, billingCycle: 'monthly' },
        SYSTEM_ACTOR,
        { now },
      );
    };
    // Takes a number, holds the counter a little, then fails: the number must come back.
    const rolledBack = async (i: number) => {
      await t.throwsAsync(
        app.db.transaction(async (trx) => {
          seenByFailures.push((await createInvoice(trx, input(i), SYSTEM_ACTOR, { now })).invoice.invoice_number);
          await pause(i % 7);
          throw new Error('fails after numbering');
        }),
        { message: 'fails after numbering' },
      );
    };
    const unknownCustomer = async (i: number) => {
      const error = await t.throwsAsync(
        createInvoice(app.db, { ...input(i), customerId: '00000000-0000-4000-8000-00000000dead' }, SYSTEM_ACTOR, {
          now,
        }),
      );
      t.is((error as { code?: string }).code, 'customer_not_found');
    };
    // A session that dies holding the counter (its process crashed): the server rolls it back. The kill comes
    // from a connection of its own: the app's pool may be all queued on the counter that session holds.
    const killer = createKnex(app.database.url, 1);
    t.teardown(() => killer.destroy());
    const killed = async (i: number) => {
      const own = createKnex(app.database.url, 1);
      try {
        await t.throwsAsync(
          own.transaction(async (trx) => {
            seenByFailures.push((await createInvoice(trx, input(i), SYSTEM_ACTOR, { now })).invoice.invoice_number);
            const { rows } = await trx.raw('select pg_backend_pid() as pid');
            await killer.raw('select pg_terminate_backend(?)', [rows[0].pid]);
            await trx.raw('select 1');
          }),
        );
      } finally {
        await own.destroy();
      }
    };

    const creation = (i: number): Promise<unknown> => {
      if (i % 30 === 13) return killed(i);
      if (i % 9 === 4) return rolledBack(i);
      if (i % 9 === 7) return unknownCustomer(i);
      if (i % 6 === 5) return subscribed(i);
      return committed(i);
    };
    // 16 at a time on the app's 10 connections: always some queued on the counter, none waiting for a connection
    // long enough to time out on a busy machine.
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < 90) await creation(next++);
      }),
    );

    const numbers = (await app
      .db('invoices')
      .where('invoice_number', 'like', `INV-${YEAR}-%`)
      .pluck('invoice_number')) as string[];
    const seqs = numbers.map(seqOf).sort((a, b) => a - b);
    t.true(numbers.length > 50);
    t.deepEqual(
      seqs,
      Array.from({ length: numbers.length }, (_, i) => i + 1),
      'gapless from 1 and unique',
    );
    t.is(
      (await app.db('document_counters').where({ kind: 'INV', year: YEAR }).first()).last_seq,
      numbers.length,
      'the counter ends at the last number used',
    );
    t.true(seenByFailures.length >= 12, 'nine rollbacks and three killed sessions took numbers');
    // Each number a failed creation took was given back: used again by a later creation, unless none came after it.
    for (const n of seenByFailures) t.true(numbers.includes(n) || seqOf(n) > numbers.length, n);
    t.true(seenByFailures.filter((n) => numbers.includes(n)).length >= seenByFailures.length / 2);
  },
);

/** The statements `work` sends through the app's knex, in order. */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const sqls: string[] = [];
  const listen = (q: { sql: string }) => sqls.push(q.sql.replace(/\s+/g, ' ').trim());
  app.db.on('query', listen);
  try {
    await work();
  } finally {
    app.db.off('query', listen);
  }
  return sqls;
}

/**
 * After the statement that takes the numbers only writes follow: nothing reads or locks while the counter is held.
 * The lines, which show no number, are written before it.
 */
function assertShortLockWindow(t: import('ava').ExecutionContext, sqls: string[]) {
  const numbering = sqls.filter((s) => s.includes('document_counters'));
  t.is(numbering.length, 1, 'one statement takes the numbers');
  t.regex(numbering[0]!, /insert into invoices /, 'and writes the invoices');
  const counterAt = sqls.indexOf(numbering[0]!);
  const linesAt = sqls.findIndex((s) => s.startsWith('insert into invoice_line_items'));
  t.true(linesAt >= 0 && linesAt < counterAt, 'the lines are written before the numbers are taken');
  const after = sqls.slice(counterAt + 1);
  t.is(after.at(-1), 'COMMIT;');
  for (const s of after.slice(0, -1))
    t.regex(
      s,
      /^(insert into|with \w+ as \( insert into)/i,
      `only writes after the numbers are taken: ${s.slice(0, 80)}`,
    );
}

test.serial('an issued invoice with store credit reads and locks everything before it takes its number', async (t) => {
  const customer = await insertCustomer(app.db);
  await app
    .db('credit_ledger')
    .insert({ customer_id: customer.id, currency: 'USD', amount: '1.00', kind: 'credit', description: 'goodwill' });
  const created = await createInvoice(
    app.db,
    { customerId: customer.id, lineItems: [line('3.00')], currency: 'USD', status: 'issued' },
    SYSTEM_ACTOR,
    { now },
  );
  const entry = await app.db('credit_ledger').where({ invoice_id: created.invoice.id }).first();
  t.is(entry.description, `Applied to ${created.invoice.invoice_number}`);
});

test.serial(
  'a subscription writes itself before its invoice takes a number; only writes follow the numbers',
  async (t) => {
    const customer = await insertCustomer(app.db);
    const plan = await makePlan(app.db, '7.00');
    let subscriptionId = '';
    const sqls = await statementsOf(async () => {
      subscriptionId = (
        await createSubscription(
          app.db,
          { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
          SYSTEM_ACTOR,
          { now },
        )
      ).id;
    });
    assertShortLockWindow(t, sqls);
    const counterAt = sqls.findIndex((s) => s.includes('document_counters'));
    const subscriptionAt = sqls.findIndex((s) => /^insert into "?subscriptions"? /.test(s));
    t.true(
      subscriptionAt >= 0 && subscriptionAt < counterAt,
      'the subscription row is written before the counter is taken',
    );
    t.is((await app.db('audit_log').where({ target_type: 'subscription', target_id: subscriptionId })).length, 1);
  },
);
