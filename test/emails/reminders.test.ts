/**
 * M-3's reminders from the lifecycle sweep: `trial.ending` (emails.trial_ending_days before the trial ends) and
 * `renewal.upcoming` (7 days before a yearly renewal), received over SMTP and parsed; once per occasion, however
 * many sweeps run, at once or one after another.
 */
import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { runLifecycleSweep } from '../../src/lifecycle/sweep.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import { queueReminders } from '../../src/subscriptions/reminders.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import { mailsMatching, startEmailsWorld, type EmailsWorld } from './fixtures.ts';

let w: EmailsWorld;
test.before(async () => {
  w = await startEmailsWorld();
});
test.after.always(async () => {
  await w?.close();
});

const DAY = 86_400_000;
const T0 = new Date('2026-03-02T10:00:00.000Z');
const day = (d: Date) => d.toISOString().slice(0, 10);

test('trial.ending: sent by the sweep 3 days before the trial ends, once however many sweeps run', async (t) => {
  const plan = await makePlan(w.app.db, '20.00', 'monthly');
  const customer = await insertCustomer(w.app.db);
  const sub = await createSubscription(
    w.app.db,
    { customerId: customer.id, planId: plan.id, billingCycle: 'monthly', trialDays: 5 },
    SYSTEM_ACTOR,
    { now: T0 },
  );
  const trialEnd = sub.trial_end!;
  // Four days before: not yet.
  await runLifecycleSweep(w.app.deps, new Date(trialEnd.getTime() - 4 * DAY));
  t.is((await w.app.db('emails').where({ customer_id: customer.id, type: 'trial.ending' })).length, 0);
  const asOf = new Date(trialEnd.getTime() - 2.5 * DAY);
  const first = await runLifecycleSweep(w.app.deps, asOf);
  t.true(first.remindersQueued >= 1);
  // A second sweep, and two more at once: nothing written again.
  await runLifecycleSweep(w.app.deps, asOf);
  await Promise.all([queueReminders(w.app.db, asOf), queueReminders(w.app.db, new Date(asOf.getTime() + DAY))]);
  const rows = await w.app.db('emails').where({ customer_id: customer.id, type: 'trial.ending' });
  t.is(rows.length, 1);
  const [mail] = await mailsMatching(w.smtp, `Your ${plan.name} trial ends on ${day(trialEnd)}`);
  t.deepEqual(mail!.to, [customer.email]);
  t.truthy(mail!.parsed.html);
  t.regex(mail!.parsed.text!, /Price after the trial: +20\.00 USD \/ month/);
  t.regex(mail!.parsed.text!, new RegExp(`Trial ends: +${day(trialEnd)}`));
});

test('renewal.upcoming: 7 days before a yearly renewal, with the amount; monthly ones get none', async (t) => {
  const yearly = await makePlan(w.app.db, '1200.00', 'yearly');
  const monthly = await makePlan(w.app.db, '100.00', 'monthly');
  const customer = await insertCustomer(w.app.db);
  const sub = await createSubscription(
    w.app.db,
    { customerId: customer.id, planId: yearly.id, billingCycle: 'yearly' },
    SYSTEM_ACTOR,
    { now: T0 },
  );
  const other = await insertCustomer(w.app.db);
  await createSubscription(
    w.app.db,
    { customerId: other.id, planId: monthly.id, billingCycle: 'monthly' },
    SYSTEM_ACTOR,
    { now: T0 },
  );
  const renewsAt = sub.current_period_end;
  const asOf = new Date(renewsAt.getTime() - 6 * DAY);
  await queueReminders(w.app.db, asOf);
  await queueReminders(w.app.db, asOf);
  t.is((await w.app.db('emails').where({ customer_id: customer.id, type: 'renewal.upcoming' })).length, 1);
  t.is((await w.app.db('emails').where({ customer_id: other.id, type: 'renewal.upcoming' })).length, 0);
  const [mail] = await mailsMatching(w.smtp, `Your ${yearly.name} subscription renews on ${day(renewsAt)}`);
  t.deepEqual(mail!.to, [customer.email]);
  t.regex(mail!.parsed.text!, /Amount: +1,200\.00 USD/);
});
