import test from 'ava';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import {
  postProviderA,
  postProviderC,
  PROVIDER_SECRETS,
  providerAEvent,
  providerCEvent,
} from '../helpers/provider-events.ts';
import { adminCtx, type Ctx } from '../payments/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';
import { newSubscription } from './fixtures.ts';

let app: TestApp;
let c: Ctx;
test.before(async () => {
  app = await startTestApp(PROVIDER_SECRETS);
  c = await adminCtx(app);
  await registerWorkers(app.boss, app.deps, ['provider_events'], jobHandlers);
});
test.after.always(async () => app?.close());

type StoredRow = { id: string; status: string; failure_reason: string | null };
const row = (provider: string, eventId: string) => (): Promise<StoredRow | undefined> =>
  app.db('provider_events').where({ provider, event_id: eventId }).first();
const settled = (read: () => Promise<StoredRow | undefined>) =>
  waitFor(read, (r) => r !== undefined && r.status !== 'received');
const digest = async (body: string) => (await import('node:crypto')).createHash('sha256').update(body).digest('hex');
const statusOf = async (id: string) => (await app.db('subscriptions').where({ id }).first()).status as string;
const subscriptionEvents = async (id: string) =>
  (await app.db('events').whereRaw("data->>'id' = ?", [id]).orderBy('created_at')).map((e) => e.type as string);

test(
  'provider_c subscription_updated arriving before its subscription_created: ends on the update, the late create is ' +
    'ignored',
  async (t) => {
    const sub = await newSubscription(c);
    const base = Date.now();
    const created = JSON.stringify(
      providerCEvent(
        'subscription_created',
        { subscription_id: sub.id },
        { status: 'on_trial', created_at: new Date(base).toISOString(), updated_at: new Date(base).toISOString() },
      ),
    );
    const updated = JSON.stringify(
      providerCEvent(
        'subscription_updated',
        { subscription_id: sub.id },
        { status: 'paused', updated_at: new Date(base + 1000).toISOString() },
      ),
    );
    t.is((await postProviderC(app.baseUrl, updated)).status, 200);
    t.is((await settled(row('provider_c', await digest(updated))))!.status, 'processed');
    t.is(await statusOf(sub.id), 'paused');
    t.is((await postProviderC(app.baseUrl, created)).status, 200);
    t.is((await settled(row('provider_c', await digest(created))))!.status, 'ignored');
    t.is(await statusOf(sub.id), 'paused');
    t.deepEqual(await subscriptionEvents(sub.id), ['subscription.created', 'subscription.updated']);
  },
);

test(
  'two status events for one subscription applied at the same moment: the older one, waiting behind the newer, is ' +
    'ignored',
  async (t) => {
    const sub = await newSubscription(c);
    const now = Math.floor(Date.now() / 1000);
    const newer = providerAEvent.subscriptionUpdated(sub.id, 'past_due', now);
    const older = providerAEvent.subscriptionUpdated(sub.id, 'paused', now - 30);
    // Waiters on the subscription's row lock in this test's database.
    const waiters = async () =>
      Number(
        (
          await app.db.raw(
            `select count(*) as n from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock'
                and query ilike '%from "subscriptions"%for update%'`,
          )
        ).rows[0].n,
      );
    // Hold the subscription so both events are being applied at once: the newer queues first, then the older.
    await app.db.transaction(async (holder) => {
      await holder('subscriptions').where({ id: sub.id }).forUpdate().first();
      t.is((await postProviderA(app.baseUrl, newer)).status, 200);
      t.is(await waitFor(waiters, (n) => n === 1, 10_000), 1);
      t.is((await postProviderA(app.baseUrl, older)).status, 200);
      t.is(await waitFor(waiters, (n) => n === 2, 10_000), 2);
    });
    t.is((await settled(row('provider_a', newer.id)))!.status, 'processed');
    t.is((await settled(row('provider_a', older.id)))!.status, 'ignored');
    t.is(await statusOf(sub.id), 'past_due');
    t.deepEqual(await subscriptionEvents(sub.id), ['subscription.created', 'subscription.updated']);
  },
);
