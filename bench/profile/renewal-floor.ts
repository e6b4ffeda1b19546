/**
 * Profiling aid for issue 20: the floor under the lifecycle bench's ratio (bench/renewal-floor.ts) on 1, 2 and 3
 * connections (FLOOR_CONNECTIONS, comma-separated), each rate beside the lifecycle bench's raw invoice-insert ceiling
 * measured in the same run, with PostgreSQL's CPU per renewal (compare bench/profile/renewal-steps.ts, the service's
 * renewals). `npm run bench` measures it too, at the sweep's concurrency, after the sweep.
 */
import { createKnex } from '../../src/db/knex.ts';
import { cleanUp, onCleanup, startBenchDatabase } from '../harness.ts';
import { seedRows } from '../fixtures.ts';
import { CEILING_BATCH, insertBenchEndpoint, rawInvoiceInserts } from '../lifecycle-fixtures.ts';
import { FLOOR_BATCH, measureRenewalFloor } from '../renewal-floor.ts';

const COUNT = Number(process.env.FLOOR_COUNT ?? 100_000);
const CONNECTIONS = (process.env.FLOOR_CONNECTIONS ?? '1,2,3').split(',').map(Number);

async function main(): Promise<void> {
  const knex = createKnex(await startBenchDatabase(), 4);
  onCleanup(() => knex.destroy());
  const { customerIds, planIds } = await seedRows(knex);
  const endpointId = await insertBenchEndpoint(knex);
  const ceiling = await rawInvoiceInserts(knex, customerIds, COUNT);
  await knex.raw('drop table bench_invoice_ceiling');
  console.log(
    `renewal floor: ${COUNT} due subscriptions, batches of ${FLOOR_BATCH}; raw invoice-insert ceiling ` +
      `${ceiling.toFixed(0)} rows/s (${CEILING_BATCH} per insert)`,
  );
  for (const connections of CONNECTIONS) {
    const floor = await measureRenewalFloor(knex, { customerIds, planIds, endpointId, count: COUNT }, connections);
    console.log(
      `  ${connections} connection(s): ${floor.renewalsPerSecond.toFixed(0)} renewals/s   ratio ` +
        `${(floor.renewalsPerSecond / ceiling).toFixed(2)}   PostgreSQL CPU ${floor.postgresMicros.toFixed(0)} µs ` +
        `per renewal`,
    );
  }
}

try {
  await main();
} finally {
  await cleanUp();
}
process.exit(0);
