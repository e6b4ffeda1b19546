import { rotating, type Benchmark } from './harness.ts';

/**
 * Subscription creation (issue 5): the subscription, its first period's invoice (numbered, priced, issued,
 * store credit checked) and both events in one transaction, spread over the seeded customers and plans.
 * Like invoice creation it takes the year's invoice-number counter row, so creations queue on that row.
 */
export const createSubscription: Benchmark = {
  name: 'POST /api/billing/subscriptions',
  ceiling: 'write',
  // issue 32's aim for the plain core.
  aim: 0.1,
  load: (fixtures) => {
    const nextCustomer = rotating(fixtures.customerIds);
    const nextPlan = rotating(fixtures.planIds);
    return {
      method: 'POST',
      headers: { cookie: fixtures.cookie },
      next: () => ({
        path: '/api/billing/subscriptions',
        body: { customerId: nextCustomer(), planId: nextPlan(), billingCycle: 'monthly' },
      }),
      accept: (body) => body.includes('"status":"active"'),
    };
  },
};
