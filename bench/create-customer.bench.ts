import type { Benchmark } from './harness.ts';

/** A write through the whole stack; every request creates a new customer (emails are unique). */
export const createCustomer: Benchmark = {
  name: 'POST /api/customers',
  ceiling: 'write',
  // issue 32's aim for the plain core.
  aim: 0.6,
  load: (fixtures) => {
    let n = 0;
    return {
      method: 'POST',
      headers: { cookie: fixtures.cookie },
      next: () => ({ path: '/api/customers', body: { name: `Bench Customer ${++n}`, email: `bench-${n}@bench.test` } }),
    };
  },
};
