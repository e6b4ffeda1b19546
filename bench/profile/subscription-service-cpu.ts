/**
 * Profiling aid for issue 20 (not part of `npm run bench`): the CPU this process spends per subscription creation
 * in the service alone (subscriptions/service.ts createSubscription on a pool: statements built, sent and read,
 * the invoice planned), without HTTP, calls one at a time so PostgreSQL's work does not compete with ours.
 * PROFILE_REQUESTS calls after 500 unmeasured; run under `node --cpu-prof` for where the time goes. On one pooled
 * connection, so the CPU of its PostgreSQL backend per creation is read too (from /proc), beside that of all the
 * server's processes (WAL writer, checkpointer).
 */
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createKnex } from '../../src/db/knex.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import { seedRows } from '../fixtures.ts';
import { cleanUp, onCleanup, rotating, startBenchDatabase } from '../harness.ts';
import { cpuTicks, parentPid, treeTicks } from '../proc-cpu.ts';

const REQUESTS = Number(process.env.PROFILE_REQUESTS ?? 3000);

try {
  const url = await startBenchDatabase();
  const knex = createKnex(url, 1);
  onCleanup(() => knex.destroy());
  const rows = await seedRows(knex);
  const nextCustomer = rotating(rows.customerIds);
  const nextPlan = rotating(rows.planIds);
  const create = () =>
    createSubscription(knex, { customerId: nextCustomer(), planId: nextPlan(), billingCycle: 'monthly' }, SYSTEM_ACTOR);
  for (let i = 0; i < 500; i++) await create();
  const backend = (await knex.raw('select pg_backend_pid() as pid')).rows[0].pid as number;
  const postmaster = parentPid(backend);
  const pgBefore = [cpuTicks(backend), treeTicks(postmaster)];
  const before = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < REQUESTS; i++) await create();
  const used = process.cpuUsage(before);
  const wall = performance.now() - started;
  const pgAfter = [cpuTicks(backend), treeTicks(postmaster)];
  console.log(
    `PostgreSQL: the backend ${(((pgAfter[0]! - pgBefore[0]!) * 10) / REQUESTS).toFixed(3)} ms CPU per creation, ` +
      `all its processes ${(((pgAfter[1]! - pgBefore[1]!) * 10) / REQUESTS).toFixed(3)} ms`,
  );
  console.log(
    `${REQUESTS} creations one at a time: this process ${((used.user + used.system) / 1000 / REQUESTS).toFixed(3)} ` +
      `ms CPU per creation (user ${(used.user / 1000 / REQUESTS).toFixed(3)}, system ` +
      `${(used.system / 1000 / REQUESTS).toFixed(3)}), wall ${(wall / REQUESTS).toFixed(3)} ms`,
  );
} finally {
  await cleanUp();
}
process.exit(0);
