/**
 * The web process SIGKILLed under a load of invoice and payment writes, three times, and started again on the
 * same port. Clients send every POST with an Idempotency-Key and retry on connection errors (D-6) until they
 * get an answer: every key ends with exactly one success, and the database holds exactly one invoice and one
 * payment per key, however the kills fell (before, during or after a commit).
 */
import test from 'ava';
import { insertCustomer } from '../helpers/factories.ts';
import { adminCookie, postUntilAnswered } from './clients.ts';
import { databaseOfThisFile, sleep, startWeb, type WebProcess } from './processes.ts';

const testDatabase = databaseOfThisFile(test);

const CLIENTS = 12;
const KILLS = 3;

interface KeyOutcome {
  key: string;
  status: number;
  id: string;
  replayed: boolean;
}

test(
  'web SIGKILLed 3 times under idempotent invoice + payment writes: one invoice and one payment per key, no ' +
    'duplicates',
  async (t) => {
    t.timeout(150_000);
    const database = testDatabase();
    let web: WebProcess = await startWeb(database.url, { env: { LOG_LEVEL: 'warn' } });
    const port = web.port;
    const cookie = await adminCookie(web.baseUrl, database.knex);
    const customers = await Promise.all(Array.from({ length: CLIENTS }, () => insertCustomer(database.knex)));

    let loadOn = true;
    const outcomes: KeyOutcome[] = [];
    let retries = 0;
    let connectionErrors = 0;
    const client = async (n: number) => {
      for (let i = 0; loadOn; i++) {
        const invoiceKey = `inv-${n}-${i}`;
        const invoice = await postUntilAnswered(web.baseUrl, '/api/billing/invoices', {
          cookie,
          key: invoiceKey,
          body: {
            customerId: customers[n]!.id,
            status: 'issued',
            lineItems: [
              {
                description: `Seat ${n}.${i}`,
                quantity: 1 + (i % 3),
                unitPrice: `${10 + n}.${String(i % 100).padStart(2, '0')}`,
              },
            ],
          },
        });
        retries += invoice.retries;
        connectionErrors += invoice.connectionErrors;
        outcomes.push({
          key: invoiceKey,
          status: invoice.response.status,
          id: invoice.response.body?.id,
          replayed: invoice.response.headers.get('idempotent-replayed') === 'true',
        });
        if (invoice.response.status !== 201) continue;
        const paymentKey = `pay-${n}-${i}`;
        const payment = await postUntilAnswered(web.baseUrl, '/api/billing/payments', {
          cookie,
          key: paymentKey,
          body: {
            invoiceId: invoice.response.body.id,
            amount: invoice.response.body.total,
            paymentMethod: 'bank_transfer',
          },
        });
        retries += payment.retries;
        connectionErrors += payment.connectionErrors;
        outcomes.push({
          key: paymentKey,
          status: payment.response.status,
          id: payment.response.body?.id,
          replayed: payment.response.headers.get('idempotent-replayed') === 'true',
        });
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, n) => client(n));

    const downtimes: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      await sleep(1500 + Math.random() * 1000);
      const before = outcomes.length;
      await web.kill();
      const killedAt = Date.now();
      web = await startWeb(database.url, { port, env: { LOG_LEVEL: 'warn' } });
      downtimes.push(Date.now() - killedAt);
      t.log(`kill ${k + 1}: ${before} answers before it; back after ${Date.now() - killedAt} ms`);
    }
    await sleep(1500);
    loadOn = false;
    await Promise.all(clients);
    await web.stop();

    const replays = outcomes.filter((o) => o.replayed).length;
    t.log(
      `${outcomes.length} keys answered, ${connectionErrors} connection errors, ${retries} retries, ${replays} ` +
        `answers replayed from a commit whose first answer was lost`,
    );
    t.true(connectionErrors > 0, 'the kills cut requests off');

    // Exactly one success per key, and every answer a success.
    const keys = new Set(outcomes.map((o) => o.key));
    t.is(keys.size, outcomes.length, 'one final answer per key');
    t.deepEqual(
      outcomes.filter((o) => o.status !== 201),
      [],
      'every key ended with 201',
    );

    // The database holds exactly what the answers say: one row per key, nothing else.
    const invoiceIds = outcomes.filter((o) => o.key.startsWith('inv-')).map((o) => o.id);
    const paymentIds = outcomes.filter((o) => o.key.startsWith('pay-')).map((o) => o.id);
    const db = database.knex;
    const invoices = await db('invoices').select('id', 'status', 'invoice_number');
    const payments = await db('payments').select('id', 'invoice_id', 'amount');
    t.is(invoices.length, invoiceIds.length, 'no invoice without its key, none twice');
    t.is(payments.length, paymentIds.length, 'no payment without its key, none twice');
    t.deepEqual(invoices.map((r) => r.id).sort(), [...invoiceIds].sort());
    t.deepEqual(payments.map((r) => r.id).sort(), [...paymentIds].sort());
    t.is(new Set(payments.map((p) => p.invoice_id)).size, payments.length, 'one payment per invoice');
    t.deepEqual(
      invoices.filter((i) => i.status !== 'paid'),
      [],
      'every invoice paid in full once',
    );
    t.is(new Set(invoices.map((i) => i.invoice_number)).size, invoices.length, 'invoice numbers unique');
    const stored = await db('idempotency_keys').count<{ count: number }[]>('* as count').first();
    t.is(Number(stored!.count), outcomes.length, 'one stored response per key');
  },
);
