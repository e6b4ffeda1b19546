import { rotating, type Benchmark } from './harness.ts';

/**
 * A read through the whole stack (session lookup, routing, validation, knex), over all seeded products. Aim
 * (issue 32): at least 0.7 of the one-select ceiling.
 */
export const getProduct: Benchmark = {
  name: 'GET /api/products/:id',
  ceiling: 'select',
  aim: 0.7,
  load: (fixtures) => {
    const nextId = rotating(fixtures.productIds);
    return { method: 'GET', headers: { cookie: fixtures.cookie }, next: () => ({ path: `/api/products/${nextId()}` }) };
  },
};
