import { z } from 'zod';
import { iso, nameText, pageQuery, timestampInput, uuid } from '../http/schemas.ts';
import { billingCycle } from '../plans/schema.ts';
import type { SubscriptionRow } from './repo.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

export const SUBSCRIPTION_STATUSES = ['active', 'paused', 'canceled', 'past_due', 'trialing'] as const;
export const SETTABLE_STATUSES = ['active', 'paused', 'canceled'] as const;
export const MAX_TRIAL_DAYS = 730;

export const createSubscriptionBody = z
  .object({
    customerId: uuid,
    planId: uuid,
    billingCycle,
    trialDays: z
      .number({ error: `must be an integer from 0 to ${MAX_TRIAL_DAYS}` })
      .int(`must be an integer from 0 to ${MAX_TRIAL_DAYS}`)
      .min(0, `must be an integer from 0 to ${MAX_TRIAL_DAYS}`)
      .max(MAX_TRIAL_DAYS, `must be an integer from 0 to ${MAX_TRIAL_DAYS}`)
      .optional(),
    couponCode: nameText(64).optional(),
  })
  .meta({
    examples: [{ customerId: EXAMPLE_ID.customer, planId: EXAMPLE_ID.plan, billingCycle: 'monthly', trialDays: 14 }],
  });
export type CreateSubscriptionInput = z.infer<typeof createSubscriptionBody>;

export const updateSubscriptionBody = z
  .object({
    status: z.enum(SETTABLE_STATUSES, { error: `must be one of ${SETTABLE_STATUSES.join(', ')}` }).optional(),
    cancelAtPeriodEnd: z.boolean().optional(),
  })
  .refine((b) => b.status !== undefined || b.cancelAtPeriodEnd !== undefined, {
    message: 'give status or cancelAtPeriodEnd',
    path: ['status'],
  })
  // The refinement above, said in the document: at least one of the two fields (both together are fine).
  .meta({
    anyOf: [{ required: ['status'] }, { required: ['cancelAtPeriodEnd'] }],
    examples: [{ cancelAtPeriodEnd: true }],
  });
export type UpdateSubscriptionInput = z.infer<typeof updateSubscriptionBody>;

/**
 * `prorationDate` (optional, within the last hour): the instant to prorate from, so a change made after a
 * preview credits and charges exactly what the preview showed (as Stripe's proration_date).
 */
export const changePlanBody = z
  .object({ newPlanId: uuid, prorate: z.boolean().default(true), prorationDate: timestampInput.optional() })
  .meta({ examples: [{ newPlanId: EXAMPLE_ID.otherPlan, prorate: true }] });
export type ChangePlanInput = z.output<typeof changePlanBody>;

export const listSubscriptionsQuery = pageQuery.extend({
  customerId: uuid.optional(),
  planId: uuid.optional(),
  status: z.enum(SUBSCRIPTION_STATUSES).optional(),
});

/** The subscription the document shows as an example (also inside a customer's detail). */
export const SUBSCRIPTION_EXAMPLE = {
  id: EXAMPLE_ID.subscription,
  customerId: EXAMPLE_ID.customer,
  planId: EXAMPLE_ID.plan,
  status: 'active',
  billingCycle: 'monthly',
  currentPeriodStart: '2026-01-05T09:30:00.000Z',
  currentPeriodEnd: '2026-02-05T09:30:00.000Z',
  cancelAtPeriodEnd: false,
  canceledAt: null,
  trialEnd: null,
  pausedAt: null,
  couponId: null,
  createdAt: '2026-01-05T09:30:00.000Z',
  updatedAt: '2026-01-05T09:30:00.000Z',
};

export const subscriptionResponse = z
  .object({
    id: z.uuid(),
    customerId: z.uuid(),
    planId: z.uuid(),
    status: z.enum(SUBSCRIPTION_STATUSES),
    billingCycle,
    currentPeriodStart: z.string(),
    currentPeriodEnd: z.string(),
    cancelAtPeriodEnd: z.boolean(),
    canceledAt: z.string().nullable(),
    trialEnd: z.string().nullable(),
    pausedAt: z.string().nullable(),
    couponId: z.uuid().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ examples: [SUBSCRIPTION_EXAMPLE] });

/** The interface's Subscription, also the subscription.* event payload (D-74). */
export function serialiseSubscription(row: SubscriptionRow) {
  return {
    id: row.id,
    customerId: row.customer_id,
    planId: row.plan_id,
    status: row.status,
    billingCycle: row.billing_cycle,
    currentPeriodStart: iso(row.current_period_start)!,
    currentPeriodEnd: iso(row.current_period_end)!,
    cancelAtPeriodEnd: row.cancel_at_period_end,
    canceledAt: iso(row.canceled_at),
    trialEnd: iso(row.trial_end),
    pausedAt: iso(row.paused_at),
    couponId: row.coupon_id,
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}
