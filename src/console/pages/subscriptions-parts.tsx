/** What the subscription pages share: row types named from the services, plan labels and pickers, the period. */
import { statusWords } from '../components/labels.ts';
import type { findCoupon } from '../../coupons/service.ts';
import type { Db } from '../../db/knex.ts';
import type { getPlan } from '../../plans/service.ts';
import { listPlans } from '../../plans/service.ts';
import type { getSubscription } from '../../subscriptions/service.ts';
import { date, money } from '../components/format.ts';
import { Nowrap } from './customers-parts.tsx';

// Row types as the services answer them (a console page reads no domain's repo, not even for a type).
export type SubscriptionRow = Awaited<ReturnType<typeof getSubscription>>;
export type PlanRow = Awaited<ReturnType<typeof getPlan>>;
export type CouponRow = NonNullable<Awaited<ReturnType<typeof findCoupon>>>;

/** More plans than any catalog holds; the pickers list them all. */
const PLAN_PICKER_LIMIT = 500;

export const subscriptionUrl = (id: string) => `/admin/subscriptions/${id}`;

/** A plan as a person picks it: name, price and cycle. */
export const planLabel = (plan: PlanRow) =>
  `${plan.name} · ${money(plan.base_price, plan.currency)} / ${plan.billing_cycle}`;

/** Every plan, newest first, for the filter and the pickers (one query). */
export async function allPlans(db: Db): Promise<PlanRow[]> {
  return (await listPlans(db, { limit: PLAN_PICKER_LIMIT, newestFirst: true }, {})).rows;
}

/** A labelled select of plans (C-8); `empty` adds a first option with no value. */
export function PlanSelect({
  id,
  name,
  label,
  plans,
  value,
  empty,
}: {
  id: string;
  name: string;
  label: string;
  plans: PlanRow[];
  value?: string;
  empty?: string;
}) {
  return (
    <p class="field">
      <label for={id}>{label}</label>
      <select id={id} name={name}>
        {empty !== undefined ? <option value="">{empty}</option> : null}
        {plans.map((p) => (
          <option value={p.id} selected={p.id === value}>
            {planLabel(p)}
          </option>
        ))}
      </select>
    </p>
  );
}

/** The current period as `start – end` (dates, UTC). */
export function Period({ sub }: { sub: Pick<SubscriptionRow, 'current_period_start' | 'current_period_end'> }) {
  return (
    <>
      <Nowrap>{date(sub.current_period_start)}</Nowrap> – <Nowrap>{date(sub.current_period_end)}</Nowrap>
    </>
  );
}

export const StatusBadge = ({ value }: { value: string }) => <span class="status nowrap">{statusWords(value)}</span>;
