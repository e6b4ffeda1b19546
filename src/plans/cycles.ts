/** How often a plan bills (D-43): the plan chooses it, and a subscription's periods follow it. */
export const BILLING_CYCLES = ['monthly', 'quarterly', 'yearly'] as const;

export type BillingCycle = (typeof BILLING_CYCLES)[number];

/** Calendar months in one period of each cycle. */
export const CYCLE_MONTHS: Record<BillingCycle, number> = { monthly: 1, quarterly: 3, yearly: 12 };
