/**
 * Issue 35: the web process SIGKILLed three times while clients report usage batches. Each client retries every
 * batch whose answer it did not get, with the same transactionIds (U-6): afterwards every event sent is counted
 * exactly once, in the events and in the running aggregate the usage read answers from, however the kills fell
 * (before, during or after a batch's commit).
 */
import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createApiKey } from '../../src/api-keys/service.ts';
import { request } from '../helpers/http.ts';
import { makeMetric, makeUsagePlan, subscribe } from '../usage/fixtures.ts';
import { databaseOfThisFile, sleep, startWeb, type WebProcess } from './processes.ts';

const testDatabase = databaseOfThisFile(test);

const CLIENTS = 8;
const KILLS = 3;
const BATCH = 100;

test('web SIGKILLed 3 times under usage batches retried by their clients: every event counted once', async (t) => {
  t.timeout(150_000);
  const database = testDatabase();
  const db = database.knex;
  let web: WebProcess = await startWeb(database.url, { env: { LOG_LEVEL: 'warn' } });
  const port = web.port;
  const metric = await makeMetric(db);
  const plan = await makeUsagePlan(db, [{ metricId: metric.id, model: 'per_unit', unitPrice: '0.01' }]);
  const clients = await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      const { customer, sub } = await subscribe(db, plan.id);
      const { key } = await createApiKey(db, { name: 'usage', customerId: customer.id }, SYSTEM_ACTOR);
      return { customerId: customer.id, subscriptionId: sub.id, key, sent: 0 };
    }),
  );

  let loadOn = true;
  let connectionErrors = 0;
  let duplicates = 0;
  const unexpected: string[] = [];
  const run = async (n: number) => {
    const client = clients[n]!;
    for (let b = 0; loadOn; b++) {
      const events = Array.from({ length: BATCH }, (_, i) => ({
        transactionId: `c${n}-b${b}-e${i}`,
        metric: metric.code,
      }));
      for (;;) {
        try {
          const res = await request(web.baseUrl, '/api/v1/usage/events', { bearer: client.key, body: { events } });
          if (res.status !== 200) unexpected.push(`${res.status} ${res.text.slice(0, 200)}`);
          for (const r of res.body?.results ?? []) {
            if (r.status === 'duplicate') duplicates += 1;
            else if (r.status !== 'accepted') unexpected.push(JSON.stringify(r));
          }
          break;
        } catch {
          // No answer (the process died mid-request): send the same batch again.
          connectionErrors += 1;
          await sleep(50 + Math.random() * 100);
        }
      }
      client.sent += BATCH;
    }
  };
  const running = clients.map((_, n) => run(n));
  for (let k = 0; k < KILLS; k++) {
    await sleep(1500 + Math.random() * 1000);
    await web.kill();
    web = await startWeb(database.url, { port, env: { LOG_LEVEL: 'warn' } });
  }
  await sleep(1000);
  loadOn = false;
  await Promise.all(running);

  t.log(
    `${clients.reduce((s, c) => s + c.sent, 0)} events sent, ${connectionErrors} batches retried, ${duplicates} ` +
      'events answered duplicate on a retry whose first attempt had committed',
  );
  t.deepEqual(unexpected, []);
  t.true(connectionErrors > 0, 'the kills cut requests off');
  for (const client of clients) {
    const stored = await db('usage_events').where({ customer_id: client.customerId }).count<{ n: number }[]>('* as n');
    t.is(Number(stored[0]!.n), client.sent, 'each event stored once');
    const usage = await request(web.baseUrl, `/api/v1/subscriptions/${client.subscriptionId}/usage`, {
      bearer: client.key,
    });
    t.is(usage.body.charges[0].quantity, String(client.sent), 'and counted once');
  }
  await web.stop();
});
