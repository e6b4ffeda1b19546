import { rotating, type Benchmark } from './harness.ts';

/** A read through the whole stack (session lookup, routing, validation, knex), over all seeded products. */
export const getProduct: Benchmark = {
  name: 'GET /api/products/:id',
  ceiling: 'select',
  load: (fixtures) => {
    const nextId = rotating(fixtures.productIds);
    return { method: 'GET', headers: { cookie: fixtures.cookie }, next: () => ({ path: `/api/products/${nextId()}` }) };
  },
};
