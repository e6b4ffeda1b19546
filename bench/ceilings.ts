/** The loads that measure the raw ceilings, shaped like the service benchmarks they are compared with. */
import { rotating, type CeilingKind, type Fixtures, type LoadSpec } from './harness.ts';

export interface Ceiling {
  title: string;
  load(fixtures: Fixtures): LoadSpec;
}

export const ceilings: Record<CeilingKind, Ceiling> = {
  select: {
    title: '(a) Koa+pg select by id',
    load: (fixtures) => {
      const nextId = rotating(fixtures.productIds);
      return { method: 'GET', next: () => ({ path: `/products/${nextId()}` }) };
    },
  },
  write: {
    title: '(b) Koa+pg write txn',
    load: () => {
      let n = 0;
      // Unique emails: customers has a unique index on lower(email), as the service's inserts do.
      return {
        method: 'POST',
        next: () => ({ path: '/customers', body: { name: `Ceiling ${++n}`, email: `ceiling-${n}@bench.test` } }),
      };
    },
  },
};
