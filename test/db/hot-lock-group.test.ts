/**
 * Group commit of hot-lock transactions (issue 20, db/hot-lock-group.ts), through the HTTP API on real PostgreSQL.
 * To make a group certain rather than likely, a connection of the test holds the year's counter row: the first
 * creation (alone) waits on it in PostgreSQL, every creation that arrives meanwhile waits in the process's queue,
 * and once the row is let go they all run as ONE group. What must hold: gapless consecutive numbers, one audit row
 * and the events of each creation, a refused session answered 401 with nothing written for it, an unknown customer
 * answered 400 alone while the others are created, and fewer COMMITs than creations.
 */
import test from 'ava';
import type { Knex } from 'knex';
import { createKnex } from '../../src/db/knex.ts';
import { groupStats, MOST_GROUPS_IN_FLIGHT, waitingUnits } from '../../src/db/hot-lock-group.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request, type JsonResponse } from '../helpers/http.ts';
import { queriesDuring } from '../../bench/profile/pg-queries.ts';
import { line } from '../invoices/fixtures.ts';
import { makePlan } from '../subscriptions/fixtures.ts';

let app: TestApp;
let holder: Knex;
let cookie: string;
let planId: string;
const YEAR = new Date().getUTCFullYear();
const seqOf = (n: string) => Number(n.split('-')[2]);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

test.before(async () => {
  app = await startTestApp();
  holder = createKnex(app.database.url, 1);
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  planId = (await makePlan(app.db, '20.00')).id;
  // The year's counter row exists from the first creation on.
  const first = await postInvoice(cookie, (await insertCustomer(app.db)).id);
  if (first.status !== 201) throw new Error(first.text);
});
test.after.always(async () => {
  await holder?.destroy();
  await app?.close();
});

const postInvoice = (as: string, customerId: string) =>
  request(app.baseUrl, '/api/billing/invoices', {
    cookie: as,
    body: { customerId, taxRate: '10', lineItems: [line('10.00', 2)] },
  });
const postSubscription = (as: string, customerId: string) =>
  request(app.baseUrl, '/api/billing/subscriptions', {
    cookie: as,
    body: { customerId, planId, billingCycle: 'monthly' },
  });

/**
 * Sends the first MOST_GROUPS_IN_FLIGHT of `sends` while the counter row is held, one at a time, each once the ones
 * before wait on the row in PostgreSQL (the first goes alone, the next as groups of one: that many are in flight at
 * most, hot-lock-group.ts), then the others, and once all of those wait in the queue lets the row go: they run as ONE
 * group. Answers every response in the order of `sends`, and the queries sent meanwhile.
 */
async function inOneGroup(
  sends: (() => Promise<JsonResponse>)[],
): Promise<{ answers: JsonResponse[]; queries: string[] }> {
  const inFlight = sends.slice(0, MOST_GROUPS_IN_FLIGHT);
  const grouped = sends.slice(MOST_GROUPS_IN_FLIGHT);
  let answers: JsonResponse[] = [];
  const queries = await queriesDuring(async () => {
    let all: Promise<JsonResponse[]> | undefined;
    // The holder's commit (when this callback returns) lets the ones in flight go, then the group.
    await holder.transaction(async (trx) => {
      await trx.raw(`select 1 from document_counters where kind = 'INV' and year = ? for update`, [YEAR]);
      const flying: Promise<JsonResponse>[] = [];
      for (const send of inFlight) {
        flying.push(send());
        for (let i = 0; i < 500 && (await waitsOnLock(trx)) < flying.length; i++) await pause(10);
      }
      all = Promise.all([...flying, ...grouped.map((send) => send())]);
      for (let i = 0; i < 500 && waitingUnits(app.db) < grouped.length; i++) await pause(10);
      if (waitingUnits(app.db) < grouped.length)
        throw new Error(`only ${waitingUnits(app.db)} of ${grouped.length} creations queued`);
    });
    answers = await all!;
  });
  return { answers, queries };
}

async function waitsOnLock(trx: Knex.Transaction): Promise<number> {
  const result = await trx.raw(
    `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
  );
  return result.rows[0].n;
}

const commitsIn = (queries: string[]) => queries.filter((q) => /^\s*COMMIT\s*$/im.test(q)).length;

async function counterSeq(): Promise<number> {
  return (await app.db('document_counters').where({ kind: 'INV', year: YEAR }).first()).last_seq;
}

/** Each created invoice's number, and that it left one audit row and its events. */
async function checkWritten(
  t: import('ava').ExecutionContext,
  answers: { kind: 'invoice' | 'subscription'; res: JsonResponse }[],
): Promise<number[]> {
  const numbers: number[] = [];
  for (const { kind, res } of answers) {
    if (kind === 'invoice') {
      numbers.push(seqOf(res.body.invoiceNumber));
      t.is((await app.db('audit_log').where({ action: 'invoice.create', target_id: res.body.id })).length, 1);
      t.is(
        (await app.db('events').where({ type: 'invoice.created' }).whereRaw("data->>'invoiceId' = ?", [res.body.id]))
          .length,
        1,
      );
    } else {
      const invoice = await app.db('invoices').where({ subscription_id: res.body.id });
      t.is(invoice.length, 1);
      numbers.push(seqOf(invoice[0].invoice_number));
      t.is((await app.db('audit_log').where({ action: 'subscription.create', target_id: res.body.id })).length, 1);
      t.is(
        (await app.db('events').where({ type: 'subscription.created' }).whereRaw("data->>'id' = ?", [res.body.id]))
          .length,
        1,
      );
      t.is(
        (await app.db('events').where({ type: 'invoice.created' }).whereRaw("data->>'invoiceId' = ?", [invoice[0].id]))
          .length,
        1,
      );
    }
  }
  return numbers;
}

const consecutive = (numbers: number[], from: number) =>
  [...numbers].sort((a, b) => a - b).every((n, i) => n === from + i);

test.serial(
  'concurrent invoices and subscriptions commit as one group: consecutive numbers, one audit row and the events each, fewer COMMITs than creations',
  async (t) => {
    const customers = await Promise.all(Array.from({ length: 12 }, () => insertCustomer(app.db)));
    const before = await counterSeq();
    const kinds = customers.map((_, i) => (i % 2 === 0 ? 'invoice' : 'subscription') as 'invoice' | 'subscription');
    const send = (i: number) => () =>
      kinds[i] === 'invoice' ? postInvoice(cookie, customers[i]!.id) : postSubscription(cookie, customers[i]!.id);
    const stats = { ...groupStats };
    const { answers, queries } = await inOneGroup(kinds.map((_, i) => send(i)));
    for (const res of answers) t.is(res.status, 201, res.text);
    const numbers = await checkWritten(
      t,
      answers.map((res, i) => ({ kind: kinds[i]!, res })),
    );
    t.true(consecutive(numbers, before + 1), `numbers ${numbers.join(',')} after ${before}`);
    t.is(await counterSeq(), before + 12);
    // The holder's, the first creation's, the others' in flight (groups of one) and the group's: 12 creations alone would be 12 commits.
    t.deepEqual(
      [
        groupStats.groups - stats.groups,
        groupStats.grouped - stats.grouped,
        groupStats.failedGroups - stats.failedGroups,
      ],
      [MOST_GROUPS_IN_FLIGHT, 11, 0],
    );
    t.true(
      commitsIn(queries) <= MOST_GROUPS_IN_FLIGHT + 2,
      `${commitsIn(queries)} COMMITs:\n${queries.filter((q) => /COMMIT/.test(q)).join('\n---\n')}`,
    );
  },
);

test.serial(
  'a creation for an unknown customer in a group answers 400 customer_not_found, the others 201 with gapless numbers',
  async (t) => {
    const customers = await Promise.all(Array.from({ length: 6 }, () => insertCustomer(app.db)));
    const before = await counterSeq();
    const missing = '00000000-0000-4000-8000-00000000dead';
    const stats = { ...groupStats };
    const { answers } = await inOneGroup([
      () => postInvoice(cookie, customers[0]!.id),
      () => postInvoice(cookie, customers[1]!.id),
      () => postSubscription(cookie, customers[2]!.id),
      () => postInvoice(cookie, missing),
      () => postInvoice(cookie, customers[3]!.id),
      () => postSubscription(cookie, customers[4]!.id),
      () => postSubscription(cookie, missing),
      () => postInvoice(cookie, customers[5]!.id),
    ]);
    const kinds = [
      'invoice',
      'invoice',
      'subscription',
      'invoice',
      'invoice',
      'subscription',
      'subscription',
      'invoice',
    ] as const;
    for (const i of [3, 6]) {
      t.is(answers[i]!.status, 400, answers[i]!.text);
      t.is(answers[i]!.body.error.code, 'customer_not_found');
    }
    const created = answers.map((res, i) => ({ kind: kinds[i]!, res })).filter((_, i) => i !== 3 && i !== 6);
    for (const { res } of created) t.is(res.status, 201, res.text);
    t.true(consecutive(await checkWritten(t, created), before + 1));
    t.is(await counterSeq(), before + 6);
    t.is((await app.db('invoices').where({ customer_id: missing })).length, 0);
    // The group failed on the unknown customer and its units ran again alone.
    t.deepEqual(
      [groupStats.groups - stats.groups, groupStats.failedGroups - stats.failedGroups, groupStats.alone - stats.alone],
      [MOST_GROUPS_IN_FLIGHT, 1, 1],
    );
  },
);

test.serial(
  'a request whose session was revoked answers 401 in its group and writes nothing; the others are created',
  async (t) => {
    const customers = await Promise.all(Array.from({ length: 6 }, () => insertCustomer(app.db)));
    const revoked = await loginAsAdmin(app.baseUrl, app.db);
    t.is(
      (await request(app.baseUrl, '/api/auth/logout', { method: 'POST', cookie: revoked.cookie })).status < 300,
      true,
    );
    const before = await counterSeq();
    const count = async (table: string) => Number((await app.db(table).count<{ n: string }[]>('* as n'))[0]!.n);
    const [invoices, subscriptions, audits] = [
      await count('invoices'),
      await count('subscriptions'),
      await count('audit_log'),
    ];
    const stats = { ...groupStats };
    const { answers } = await inOneGroup([
      () => postInvoice(cookie, customers[0]!.id),
      () => postInvoice(cookie, customers[1]!.id),
      () => postSubscription(cookie, customers[3]!.id),
      () => postInvoice(revoked.cookie, customers[2]!.id),
      () => postSubscription(revoked.cookie, customers[4]!.id),
      () => postInvoice(cookie, customers[5]!.id),
    ]);
    for (const i of [3, 4]) {
      t.is(answers[i]!.status, 401, answers[i]!.text);
      t.is(answers[i]!.body.error.code, 'unauthenticated');
    }
    const kinds = ['invoice', 'invoice', 'subscription', 'invoice', 'subscription', 'invoice'] as const;
    const created = answers.map((res, i) => ({ kind: kinds[i]!, res })).filter((_, i) => i !== 3 && i !== 4);
    for (const { res } of created) t.is(res.status, 201, res.text);
    t.true(consecutive(await checkWritten(t, created), before + 1));
    t.is(await counterSeq(), before + 4, 'no number taken for the refused');
    // Refused inside the group, which went on without them: it did not fail.
    t.deepEqual(
      [
        groupStats.groups - stats.groups,
        groupStats.grouped - stats.grouped,
        groupStats.failedGroups - stats.failedGroups,
      ],
      [MOST_GROUPS_IN_FLIGHT, 5, 0],
    );
    t.is(await count('invoices'), invoices + 4);
    t.is(await count('subscriptions'), subscriptions + 1);
    t.is(await count('audit_log'), audits + 4);
    for (const customer of [customers[2]!, customers[4]!]) {
      t.is((await app.db('invoices').where({ customer_id: customer.id })).length, 0);
      t.is((await app.db('subscriptions').where({ customer_id: customer.id })).length, 0);
      t.is((await app.db('events').whereRaw("data->>'customerId' = ?", [customer.id])).length, 0);
    }
  },
);

test.serial(
  'a unit whose code throws after its statements ran (an inactive plan) fails the group: it answers its error alone, the others are created',
  async (t) => {
    const customers = await Promise.all(Array.from({ length: 5 }, () => insertCustomer(app.db)));
    const inactive = (await makePlan(app.db, '9.00')).id;
    await app.db('plans').where({ id: inactive }).update({ active: false });
    const before = await counterSeq();
    const stats = { ...groupStats };
    const { answers } = await inOneGroup([
      () => postInvoice(cookie, customers[0]!.id),
      () => postSubscription(cookie, customers[1]!.id),
      () => postInvoice(cookie, customers[3]!.id),
      () =>
        request(app.baseUrl, '/api/billing/subscriptions', {
          cookie,
          body: { customerId: customers[2]!.id, planId: inactive, billingCycle: 'monthly' },
        }),
      () => postSubscription(cookie, customers[4]!.id),
    ]);
    t.is(answers[3]!.status, 400, answers[3]!.text);
    t.is(answers[3]!.body.error.code, 'plan_inactive');
    const kinds = ['invoice', 'subscription', 'invoice', 'subscription', 'subscription'] as const;
    const created = answers.map((res, i) => ({ kind: kinds[i]!, res })).filter((_, i) => i !== 3);
    for (const { res } of created) t.is(res.status, 201, res.text);
    t.true(consecutive(await checkWritten(t, created), before + 1));
    t.is(await counterSeq(), before + 4);
    t.is((await app.db('subscriptions').where({ customer_id: customers[2]!.id })).length, 0);
    t.deepEqual(
      [groupStats.groups - stats.groups, groupStats.failedGroups - stats.failedGroups],
      [MOST_GROUPS_IN_FLIGHT, 1],
    );
  },
);

test.serial(
  '40 creations at once, invoices and subscriptions (some of one customer), free-running: all created, numbers gapless, one audit row and the events each',
  async (t) => {
    const customers = await Promise.all(Array.from({ length: 10 }, () => insertCustomer(app.db)));
    const before = await counterSeq();
    const kinds = Array.from(
      { length: 40 },
      (_, i) => (i % 2 === 0 ? 'invoice' : 'subscription') as 'invoice' | 'subscription',
    );
    const answers = await Promise.all(
      kinds.map((kind, i) =>
        kind === 'invoice'
          ? postInvoice(cookie, customers[i % 10]!.id)
          : postSubscription(cookie, customers[i % 4]!.id),
      ),
    );
    for (const res of answers) t.is(res.status, 201, res.text);
    const numbers = await checkWritten(
      t,
      answers.map((res, i) => ({ kind: kinds[i]!, res })),
    );
    t.true(consecutive(numbers, before + 1), `numbers ${[...numbers].sort((a, b) => a - b).join(',')} after ${before}`);
    t.is(await counterSeq(), before + 40);
  },
);
