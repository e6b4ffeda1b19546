/**
 * A provider_events worker SIGKILLed while it applies a backlog of signed provider_a payment events, then a new
 * worker: every stored event ends processed, each invoice has exactly one payment, and no event is applied twice.
 * (The webhooks, lifecycle and pdf groups have their own kill tests: see docs/operations.md.)
 */
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { postProviderA, PROVIDER_SECRETS, providerAEvent } from '../helpers/provider-events.ts';
import { adminCtx, makeInvoice, type Ctx } from '../payments/fixtures.ts';
import { killAll, sleep, startWorker, waitUntil } from './processes.ts';

let app: TestApp;
let c: Ctx;
test.before(async () => {
  app = await startTestApp(PROVIDER_SECRETS);
  c = await adminCtx(app);
});
test.after.always(async () => {
  await killAll();
  await app?.close();
});

const QUEUE = 'provider-events.apply';
const count = async (sql: string) => Number((await app.db.raw(sql)).rows[0].n);

test(
  'provider_events worker SIGKILLed mid-backlog: after a restart every event is processed once, one payment per ' +
    'invoice',
  async (t) => {
    t.timeout(150_000);
    const TOTAL = 300;
    // A job of a killed worker stays active until it expires: expireInSeconds, copied into each job when it is
    // queued (120 s in production). Shortened before the events arrive, so the retry comes within the test.
    await app.boss.updateQueue(QUEUE, { expireInSeconds: 4 });
    const invoices = [];
    for (let i = 0; i < TOTAL; i += 20)
      invoices.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(20, TOTAL - i) }, () => makeInvoice(c, { unitPrice: '12.34' })),
        )),
      );
    for (let i = 0; i < TOTAL; i += 20) {
      await Promise.all(
        invoices.slice(i, i + 20).map(async (invoice) => {
          const res = await postProviderA(app.baseUrl, providerAEvent.checkoutCompleted(invoice.id, 1234, 'USD'));
          if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
        }),
      );
    }
    t.is(
      await count(`select count(*) as n from provider_events where status = 'received'`),
      TOTAL,
      'all stored, none applied yet',
    );

    const processed = () => count(`select count(*) as n from provider_events where status = 'processed'`);
    const first = await startWorker('provider_events', app.database.url);
    await waitUntil(async () => (await processed()) >= TOTAL / 10, 60_000, 'a tenth of the events applied');
    const activeAtKill = await count(
      `select count(*) as n from pgboss.job where name = '${QUEUE}' and state = 'active'`,
    );
    await first.kill();
    const atKill = await processed();
    t.log(`killed with ${atKill} of ${TOTAL} events processed, ${activeAtKill} jobs active`);
    t.true(atKill < TOTAL, 'killed part-way');

    await sleep(5000);
    // Any pg-boss instance's supervisor fails expired jobs back to retry (the workers run it periodically).
    await app.boss.supervise(QUEUE);
    const second = await startWorker('provider_events', app.database.url);
    // Every job run too, the retried ones of events already processed included: a double apply would show by then.
    const pending = () =>
      count(`select count(*) as n from pgboss.job where name = '${QUEUE}' and state in ('created', 'retry', 'active')`);
    const waited = await waitUntil(
      async () => (await processed()) === TOTAL && (await pending()) === 0,
      60_000,
      'every event processed and every job run',
    ).catch(() => -1);
    t.true(
      waited >= 0,
      `${await processed()} of ${TOTAL} processed, ${await pending()} jobs still to run; ` +
        second.output().slice(-2000),
    );

    t.is(await count(`select count(*) as n from provider_events where status <> 'processed'`), 0);
    t.is(await count(`select count(*) as n from payments`), TOTAL, 'one payment per event, none twice');
    t.is(
      await count(
        `select count(*) as n from (select invoice_id from payments group by invoice_id having count(*) > 1) d`,
      ),
      0,
    );
    t.is(await count(`select count(*) as n from invoices where status <> 'paid'`), 0);
    t.is(
      await count(`select count(*) as n from credit_ledger`),
      0,
      'no payment turned into store credit by a double apply',
    );
    t.is(
      await count(`select count(*) as n from events where type = 'payment.succeeded'`),
      TOTAL,
      'one payment.succeeded event each',
    );
    t.is(await second.stop(), 0);
  },
);
