/**
 * The demo's customers and what they do over the year: when they sign up, to which plans (with a trial or
 * a coupon), how they pay, and the few who upgrade, downgrade, pause, cancel or lapse. Everything runs on
 * the timeline through the same services as the API, with the action's date as the clock.
 */
import { SYSTEM_ACTOR } from '../actor.ts';
import type { AppDeps } from '../app-deps.ts';
import { createCustomerBody } from '../customers/schema.ts';
import { createCustomer } from '../customers/service.ts';
import { AppError } from '../errors.ts';
import type { PaymentMethod } from '../payments/repo.ts';
import { changePlan } from '../subscriptions/change-plan.ts';
import { createSubscriptionBody, updateSubscriptionBody } from '../subscriptions/schema.ts';
import { createSubscription, updateSubscription } from '../subscriptions/service.ts';
import type { Catalog, PlanKey } from './catalog.ts';
import type { Payer } from './collections.ts';
import { emailOf, PEOPLE, type DemoPerson } from './people.ts';
import type { Random } from './random.ts';
import { backdateSignUps } from './backdate.ts';
import { addDays, DAY_MS, type Timeline } from './timeline.ts';

export interface DemoCustomer {
  id: string;
  index: number;
  person: DemoPerson;
}

/** The forty customers, or null when the first of them exists already: the database holds the demo. */
export async function createCustomers(deps: AppDeps): Promise<DemoCustomer[] | null> {
  const customers: DemoCustomer[] = [];
  for (const [index, person] of PEOPLE.entries()) {
    const body = createCustomerBody.parse({
      name: person.name,
      email: emailOf(person, index),
      company: person.company,
      tier: person.tier,
      billingAddress:
        `${100 + index * 7} ${['Market', 'Main', 'Harbor', 'Elm', 'Station'][index % 5]} ` + `Street\n${person.city}`,
      taxId: person.eu ? `EU${String(826_400_000 + index * 1_337).padStart(9, '0')}` : null,
    });
    try {
      customers.push({ id: (await createCustomer(deps.db, body, SYSTEM_ACTOR)).id, index, person });
    } catch (error) {
      if (index === 0 && error instanceof AppError && error.code === 'email_taken') return null;
      throw error;
    }
  }
  return customers;
}

type Fate = 'cancel' | 'cancelAtPeriodEnd' | 'pause' | 'pauseAndResume' | 'upgrade' | 'downgrade';

/** Fixed roles, so every kind of story is in the book whatever the random draws. */
const FATES: Record<number, Fate> = {
  9: 'cancel',
  23: 'cancel',
  31: 'cancel',
  7: 'cancelAtPeriodEnd',
  16: 'cancelAtPeriodEnd',
  27: 'cancelAtPeriodEnd',
  12: 'pause',
  28: 'pauseAndResume',
  1: 'upgrade',
  3: 'upgrade',
  10: 'upgrade',
  21: 'upgrade',
  34: 'upgrade',
  18: 'downgrade',
  35: 'downgrade',
};
const HABITS: Record<number, Payer['habit']> = {
  2: 'late',
  11: 'late',
  20: 'late',
  29: 'late',
  6: 'partial',
  25: 'partial',
  17: 'lapsed',
  24: 'lapsed',
  33: 'lapsed',
};
const COUPONS: Record<number, 'percent' | 'amount'> = { 5: 'percent', 22: 'percent', 10: 'amount', 30: 'amount' };
/** The newest customers: still in their trial when the demo ends. */
const TRIALING = new Set([36, 37, 38, 39]);

const UPGRADE: Partial<Record<PlanKey, PlanKey>> = {
  syncStarter: 'syncTeam',
  syncTeam: 'syncTeamYearly',
  syncTeamQuarterly: 'syncTeamYearly',
  syncTeamYearly: 'syncBusinessYearly',
  studioMonthly: 'studioYearly',
  apiMonthly: 'apiQuarterly',
};
const DOWNGRADE: Partial<Record<PlanKey, PlanKey>> = {
  syncTeam: 'syncStarter',
  syncTeamYearly: 'syncTeam',
  syncBusinessYearly: 'syncTeamYearly',
  studioYearly: 'studioMonthly',
  apiQuarterly: 'apiMonthly',
  syncTeamQuarterly: 'syncTeam',
};

const MAIN_PLANS: Record<DemoPerson['tier'], PlanKey[]> = {
  starter: ['syncStarter', 'syncStarter', 'studioMonthly', 'studioYearly', 'apiMonthly'],
  professional: ['syncTeam', 'syncTeam', 'syncTeamQuarterly', 'syncTeamYearly', 'apiMonthly', 'apiQuarterly'],
  enterprise: ['syncBusinessYearly', 'syncTeamYearly', 'syncTeam'],
};

export interface StoryContext {
  deps: AppDeps;
  timeline: Timeline;
  catalog: Catalog;
  random: Random;
  start: Date;
  end: Date;
  payers: Map<string, Payer>;
}

export interface StoryCounts {
  subscriptions: number;
  planChanges: number;
}

/** A date `days` after `from`, at a random time of that day, never later than two days before the end. */
function dayAfter(ctx: StoryContext, from: Date, days: number): Date {
  const at = addDays(from, days + ctx.random.next() * 0.9);
  return at.getTime() < ctx.end.getTime() - 2 * DAY_MS ? at : addDays(ctx.end, -2 - ctx.random.next());
}

function joinDate(ctx: StoryContext, index: number): Date {
  if (TRIALING.has(index)) return addDays(ctx.end, -(index - 33) * 2 - ctx.random.next());
  // Eight customers from the first weeks; the rest arrive over the year, those with a later move early enough for it.
  const day = index < 8 ? ctx.random.int(0, 40) : FATES[index] ? ctx.random.int(20, 200) : ctx.random.int(20, 330);
  return addDays(ctx.start, day + ctx.random.next());
}

function paymentMethodOf(ctx: StoryContext, person: DemoPerson): PaymentMethod {
  if (person.tier === 'enterprise') return 'bank_transfer';
  return ctx.random.pick(['bank_transfer', 'manual', 'provider_b', 'provider_b', 'provider_c'] as const);
}

/** Schedules every customer's subscriptions and later moves; answers live counts, filled as the timeline runs. */
export function planStory(ctx: StoryContext, customers: DemoCustomer[]): StoryCounts {
  const counts: StoryCounts = { subscriptions: 0, planChanges: 0 };
  const { deps, timeline, catalog } = ctx;
  const clock = (at: Date) => ({ now: at, settings: deps.config });

  const subscribe = (
    customer: DemoCustomer,
    plan: PlanKey,
    at: Date,
    extra: { trialDays?: number; coupon?: 'percent' | 'amount' } = {},
  ) => {
    const ref: { id?: string } = {};
    timeline.add(at, `${catalog.plans[plan].name} for ${customer.person.name}`, async (now) => {
      const body = createSubscriptionBody.parse({
        customerId: customer.id,
        planId: catalog.plans[plan].id,
        billingCycle: catalog.plans[plan].billing_cycle,
        trialDays: extra.trialDays,
        couponCode: extra.coupon ? catalog.coupons[extra.coupon] : undefined,
      });
      ref.id = (await createSubscription(deps.db, body, SYSTEM_ACTOR, clock(now))).id;
      counts.subscriptions += 1;
    });
    return ref;
  };

  for (const customer of customers) {
    const { index, person } = customer;
    const habit = HABITS[index] ?? (index % 7 === 5 ? 'slow' : 'prompt');
    ctx.payers.set(customer.id, {
      habit,
      method: paymentMethodOf(ctx, person),
      lapsesAt: habit === 'lapsed' ? addDays(ctx.end, -[75, 50, 40][index % 3]!) : undefined,
    });

    const joined = joinDate(ctx, index);
    // Created before the story runs (its ids plan it), the customer is dated an hour before its first subscription.
    timeline.add(addDays(joined, -1 / 24), `sign-up of ${person.name}`, (at) =>
      backdateSignUps(deps.db, [{ customerId: customer.id, at }]),
    );
    const plan: PlanKey = person.eu ? 'syncTeamEur' : ctx.random.pick(MAIN_PLANS[person.tier]);
    const fate = FATES[index];
    const trialDays = TRIALING.has(index) ? 14 : !fate && ctx.random.chance(0.25) ? 14 : undefined;
    const coupon = COUPONS[index] ?? (!person.eu && ctx.random.chance(0.12) ? 'percent' : undefined);
    const main = subscribe(customer, plan, joined, { trialDays, coupon });

    if (person.tier === 'enterprise' && !TRIALING.has(index)) {
      subscribe(customer, 'supportYearly', dayAfter(ctx, joined, ctx.random.int(1, 30)));
      if (ctx.random.chance(0.5)) subscribe(customer, 'apiQuarterly', dayAfter(ctx, joined, ctx.random.int(20, 120)));
    }
    if (person.tier === 'professional' && !person.eu && ctx.random.chance(0.4))
      subscribe(
        customer,
        ctx.random.pick(['studioMonthly', 'studioYearly'] as const),
        dayAfter(ctx, joined, ctx.random.int(10, 90)),
      );

    if (fate) scheduleFate(ctx, customer, main, plan, joined, fate, counts);
  }
  return counts;
}

function scheduleFate(
  ctx: StoryContext,
  customer: DemoCustomer,
  main: { id?: string },
  plan: PlanKey,
  joined: Date,
  fate: Fate,
  counts: StoryCounts,
): void {
  const { deps, timeline, catalog } = ctx;
  const clock = (at: Date) => ({ now: at, settings: deps.config });
  const update = (at: Date, label: string, body: unknown) =>
    timeline.add(at, `${label} ${customer.person.name}`, async (now) => {
      await updateSubscription(deps.db, main.id!, updateSubscriptionBody.parse(body), SYSTEM_ACTOR, clock(now));
    });
  const change = (to: PlanKey | undefined, at: Date) => {
    if (!to) return;
    timeline.add(
      at,
      `${catalog.plans[plan].name} -> ${catalog.plans[to].name} for ${customer.person.name}`,
      async (now) => {
        await changePlan(
          deps.db,
          main.id!,
          { newPlanId: catalog.plans[to].id, prorate: true },
          SYSTEM_ACTOR,
          clock(now),
        );
        counts.planChanges += 1;
      },
    );
  };
  switch (fate) {
    case 'cancel':
      update(dayAfter(ctx, joined, ctx.random.int(70, 250)), 'cancel', { status: 'canceled' });
      break;
    case 'cancelAtPeriodEnd':
      update(addDays(ctx.end, -ctx.random.int(4, 15) - ctx.random.next()), 'cancel at period end for', {
        cancelAtPeriodEnd: true,
      });
      break;
    case 'pause':
      update(addDays(ctx.end, -40 - ctx.random.next()), 'pause', { status: 'paused' });
      break;
    case 'pauseAndResume': {
      const paused = dayAfter(ctx, joined, 60);
      update(paused, 'pause', { status: 'paused' });
      update(dayAfter(ctx, paused, 40), 'resume', { status: 'active' });
      break;
    }
    case 'upgrade':
      change(UPGRADE[plan], dayAfter(ctx, joined, ctx.random.int(45, 200)));
      break;
    case 'downgrade':
      change(DOWNGRADE[plan], dayAfter(ctx, joined, ctx.random.int(45, 200)));
      break;
  }
}
