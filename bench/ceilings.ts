/** The loads that measure the raw ceilings, shaped like the service benchmarks they are compared with. */
import {
  measure,
  rotating,
  startChildServer,
  type CeilingKind,
  type Fixtures,
  type LoadOptions,
  type LoadSpec,
  type Measurement,
  type Row,
} from './harness.ts';

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

/**
 * The select ceiling measured alone (bench/ceiling-server.ts on its own pool), for a bench that compares pages with it
 * (console, portal): its row for the table and its measurement. `productIds` are the rows it reads.
 */
export async function measureSelectCeiling(
  databaseUrl: string,
  fixtures: Pick<Fixtures, 'productIds'> & Partial<Fixtures>,
  options: LoadOptions,
  poolMax: string,
): Promise<{ row: Row; ceiling: Measurement }> {
  const server = await startChildServer(
    'ceiling select',
    ['--import', 'tsx', 'bench/ceiling-server.ts', 'select'],
    { DATABASE_URL: databaseUrl, DB_POOL_MAX: poolMax },
    '/healthz',
  );
  const load = ceilings.select.load({
    cookie: '',
    knownDevices: [],
    unlimitedLicenseKeys: [],
    ...fixtures,
  } as Fixtures);
  const ceiling = await measure(server.baseUrl, load, options);
  const died = server.exitedEarly();
  await server.stop();
  if (died) throw new Error(died);
  return { row: { name: ceilings.select.title, measurement: ceiling }, ceiling };
}
