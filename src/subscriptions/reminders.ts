/**
 * The lifecycle sweep's reminders (M-3): `trial.ending` `emails.trial_ending_days` days before a trial ends and
 * `renewal.upcoming` 7 days before a yearly subscription renews. Each batch of subscriptions is one transaction that
 * writes their emails; the occasion (the subscription and the date it is about) makes each one once: a second sweep,
 * or one killed mid-run and run again, writes nothing it wrote before (emails' once-per-occasion index).
 */
import { REAL_CUSTOMERS, type CustomerScope } from '../db/clock-scope.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import { queueEmails, type NewEmail } from '../emails/outbox.ts';
import { findPlans } from '../plans/service.ts';
import { getSetting } from '../settings/service.ts';
import {
  type ReminderCandidate,
  type ReminderWindow,
  trialsEndingBetween,
  yearlyRenewalsBetween,
} from './reminders-repo.ts';

const DAY_MS = 86_400_000;
export const RENEWAL_NOTICE_DAYS = 7;
const BATCH = 500;
const INTERVAL = { monthly: 'month', quarterly: 'quarter', yearly: 'year' } as const;
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

type Select = (db: Db, window: ReminderWindow) => Promise<ReminderCandidate[]>;
type Write = (s: ReminderCandidate, plan: { name: string; base_price: string; currency: string }) => NewEmail;

const trialEnding: Write = (s, plan) => ({
  type: 'trial.ending',
  customerId: s.customer_id,
  occasion: `${s.id}:${s.trial_end!.toISOString()}`,
  data: {
    subscriptionId: s.id,
    trialEnd: s.trial_end!.toISOString(),
    planName: plan.name,
    price: plan.base_price,
    currency: plan.currency,
    interval: INTERVAL[s.billing_cycle],
  },
});

const renewalUpcoming: Write = (s, plan) => ({
  type: 'renewal.upcoming',
  customerId: s.customer_id,
  occasion: `${s.id}:${s.current_period_end.toISOString()}`,
  data: {
    subscriptionId: s.id,
    renewsAt: s.current_period_end.toISOString(),
    planName: plan.name,
    amount: plan.base_price,
    currency: plan.currency,
  },
});

async function remind(
  db: Db,
  select: Select,
  write: Write,
  window: Pick<ReminderWindow, 'asOf' | 'until' | 'scope'>,
  onBatch: () => Promise<void>,
) {
  let afterId = FIRST_ID;
  let written = 0;
  for (;;) {
    const due = await select(db, { ...window, afterId, limit: BATCH });
    if (due.length === 0) return written;
    const plans = await findPlans(db, [...new Set(due.map((s) => s.plan_id))]);
    const emails = due.flatMap((s) => {
      const plan = plans.get(s.plan_id);
      return plan ? [write(s, plan)] : [];
    });
    written += (await inTransaction(db, (trx) => queueEmails(trx, emails))).length;
    afterId = due.at(-1)!.id;
    await onBatch();
    if (due.length < BATCH) return written;
  }
}

/** Writes the reminders due as of `asOf`; answers how many emails it wrote (none a second time). */
export async function queueReminders(
  db: Db,
  asOf: Date,
  onBatch: () => Promise<void> = async () => {},
  scope: CustomerScope = REAL_CUSTOMERS,
) {
  const trialDays = await getSetting(db, 'emails.trial_ending_days');
  const trials = await remind(
    db,
    trialsEndingBetween,
    trialEnding,
    { asOf, until: new Date(asOf.getTime() + trialDays * DAY_MS), scope },
    onBatch,
  );
  const renewals = await remind(
    db,
    yearlyRenewalsBetween,
    renewalUpcoming,
    { asOf, until: new Date(asOf.getTime() + RENEWAL_NOTICE_DAYS * DAY_MS), scope },
    onBatch,
  );
  return trials + renewals;
}
