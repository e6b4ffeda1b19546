/** Test clocks (TC-1, TC-3, TC-6): create, read, ask for an advance, delete. */
import { type Actor, SYSTEM_ACTOR } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import type { Page, PageQuery } from '../db/paginate.ts';
import { AppError, notFound } from '../errors.ts';
import { enqueue } from '../queue/enqueue.ts';
import { getSetting } from '../settings/service.ts';
import { advanceTestClockJob } from './advance.job.ts';
import { deleteClockAndRecords } from './delete-repo.ts';
import {
  countClockCustomerRows,
  expiredTestClockIds,
  findTestClockRow,
  insertTestClockRow,
  listTestClockRows,
  lockTestClockRow,
  updateTestClockRow,
  type TestClockRow,
} from './repo.ts';
import type { AdvanceTestClockInput, CreateTestClockInput } from './schema.ts';

/** TC-1: a clock and its customers are deleted this long after the clock was created (as Stripe's are). */
const LIFETIME_DAYS = 30;
/** TC-3: the furthest one advance may move a clock. */
const MAX_ADVANCE_YEARS = 2;

const TARGET = 'test_clock';

/** TC-6: refused with 403 test_clocks_disabled where `billing.test_clocks_enabled` is false. */
export async function createTestClock(db: Db, input: CreateTestClockInput, actor: Actor): Promise<TestClockRow> {
  if (!(await getSetting(db, 'billing.test_clocks_enabled')))
    throw new AppError('test_clocks_disabled', 'Test clocks are switched off here (billing.test_clocks_enabled)');
  return inTransaction(db, async (trx) => {
    const row = await insertTestClockRow(trx, {
      name: input.name,
      frozen_time: input.frozenTime,
      lifetimeDays: LIFETIME_DAYS,
    });
    await recordAudits(trx, actor, [
      {
        action: 'test_clock.create',
        targetType: TARGET,
        targetId: row.id,
        after: { name: row.name, frozen_time: row.frozen_time },
      },
    ]);
    return row;
  });
}

export async function getTestClock(db: Db, id: string): Promise<TestClockRow> {
  const row = await findTestClockRow(db, id);
  if (!row) throw notFound('Test clock');
  return row;
}

export function listTestClocks(db: Db, page: PageQuery): Promise<Page<TestClockRow>> {
  return listTestClockRows(db, page);
}

/** How many customers each of these clocks has (the console's list). */
export function countClockCustomers(db: Db, clockIds: string[]): Promise<Map<string, number>> {
  return countClockCustomerRows(db, clockIds);
}

/** The latest time one advance from `from` may reach: `MAX_ADVANCE_YEARS` calendar years later. */
function furthestAdvance(from: Date): Date {
  const limit = new Date(from.getTime());
  limit.setUTCFullYear(limit.getUTCFullYear() + MAX_ADVANCE_YEARS);
  return limit;
}

/**
 * TC-3: moves the clock to `advancing` and enqueues its advance in the same transaction (answered 202). The row lock
 * orders two requests at once: the second finds the clock advancing and is refused (409 clock_not_advanceable), as is
 * a time not after the clock's; more than 2 years at once is a 400.
 */
export async function requestTestClockAdvance(
  db: Db,
  id: string,
  input: AdvanceTestClockInput,
  actor: Actor,
): Promise<TestClockRow> {
  return inTransaction(db, async (trx) => {
    const clock = await lockTestClockRow(trx, id);
    if (!clock) throw notFound('Test clock');
    if (clock.status === 'advancing')
      throw new AppError('clock_not_advanceable', `Test clock ${id} is advancing already; wait until it is ready`);
    const to = input.frozenTime;
    if (to.getTime() <= clock.frozen_time.getTime()) {
      const message = `must be after the clock's time ${clock.frozen_time.toISOString()} (a clock never goes back)`;
      throw new AppError('clock_not_advanceable', `frozenTime ${message}`, {
        details: [{ path: 'frozenTime', message }],
      });
    }
    if (to.getTime() > furthestAdvance(clock.frozen_time).getTime()) {
      const message = `must be at most ${MAX_ADVANCE_YEARS} years after the clock's time; advance in steps`;
      throw new AppError('invalid_request', `Invalid body: frozenTime: ${message}`, {
        details: [{ path: 'frozenTime', message }],
      });
    }
    const advancing = await updateTestClockRow(trx, id, {
      status: 'advancing',
      advance_target: to,
      advance_cursor: null,
      last_error: null,
    });
    await enqueue(trx, advanceTestClockJob, { testClockId: id });
    await recordAudits(trx, actor, [
      {
        action: 'test_clock.advance',
        targetType: TARGET,
        targetId: id,
        before: { status: clock.status, frozen_time: clock.frozen_time },
        after: { status: 'advancing', advance_target: to },
      },
    ]);
    return advancing!;
  });
}

/** TC-1: deletes the clock and every record of its customers; refused while it is advancing. */
export async function deleteTestClock(db: Db, id: string, actor: Actor): Promise<void> {
  await inTransaction(db, async (trx) => {
    const clock = await lockTestClockRow(trx, id);
    if (!clock) throw notFound('Test clock');
    if (clock.status === 'advancing')
      throw new AppError('clock_not_advanceable', `Test clock ${id} is advancing; delete it once it is ready`);
    await deleteLockedClock(trx, clock, actor, 'test_clock.delete');
  });
}

/** How many expired clocks one housekeeping run deletes; the next run (hourly) takes the rest. */
const EXPIRED_PER_RUN = 50;

/**
 * TC-1: clocks whose `deletesAfter` has passed by `asOf` are deleted with every record of their customers, as
 * Stripe deletes its test clocks 30 days after creation (the hourly housekeeping job). Each clock in a transaction of
 * its own; a clock advancing at that moment is left for the next run. Answers how many clocks went.
 */
export async function deleteExpiredTestClocks(db: Db, asOf: Date): Promise<number> {
  const ids = await expiredTestClockIds(db, asOf, EXPIRED_PER_RUN);
  let deleted = 0;
  for (const id of ids) {
    deleted += await inTransaction(db, async (trx) => {
      const clock = await lockTestClockRow(trx, id);
      if (!clock || clock.status === 'advancing' || clock.deletes_after.getTime() > asOf.getTime()) return 0;
      await deleteLockedClock(trx, clock, SYSTEM_ACTOR, 'test_clock.expire');
      return 1;
    });
  }
  return deleted;
}

/** The clock (locked by the caller) and its customers' records, with its audit row. */
async function deleteLockedClock(trx: Db, clock: TestClockRow, actor: Actor, action: string): Promise<void> {
  const customers = await deleteClockAndRecords(trx, clock.id);
  await recordAudits(trx, actor, [
    {
      action,
      targetType: TARGET,
      targetId: clock.id,
      before: { name: clock.name, frozen_time: clock.frozen_time, customers },
      after: null,
    },
  ]);
}
