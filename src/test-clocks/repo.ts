/** SQL of test clocks (TC-1, TC-3): the clock rows, and the next moment a clock's customers have something due. */
import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';

export interface TestClockRow {
  id: string;
  name: string;
  frozen_time: Date;
  status: 'ready' | 'advancing' | 'failed';
  advance_target: Date | null;
  advance_cursor: Date | null;
  last_error: string | null;
  deletes_after: Date;
  created_at: Date;
  updated_at: Date;
}

export async function insertTestClockRow(
  db: Db,
  row: Pick<TestClockRow, 'name' | 'frozen_time'> & { lifetimeDays: number },
): Promise<TestClockRow> {
  const { lifetimeDays, ...columns } = row;
  // Dated from created_at's own now(), so the two are exactly `lifetimeDays` apart.
  const deletes_after = db.raw('now() + make_interval(days => ?)', [lifetimeDays]);
  const [created] = await db('test_clocks')
    .insert({ ...columns, deletes_after })
    .returning('*');
  return created as TestClockRow;
}

export function findTestClockRow(db: Db, id: string): Promise<TestClockRow | undefined> {
  return db('test_clocks').where({ id }).first();
}

export function lockTestClockRow(db: Db, id: string): Promise<TestClockRow | undefined> {
  return db('test_clocks').where({ id }).forUpdate().first();
}

export function listTestClockRows(db: Db, page: PageQuery): Promise<Page<TestClockRow>> {
  return paginate<TestClockRow>(db('test_clocks').select('*'), 'test_clocks', page);
}

export async function updateTestClockRow(
  db: Db,
  id: string,
  changes: Partial<Pick<TestClockRow, 'status' | 'frozen_time' | 'advance_target' | 'advance_cursor' | 'last_error'>>,
): Promise<TestClockRow | undefined> {
  const [row] = await db('test_clocks')
    .where({ id })
    .update({ ...changes, updated_at: db.fn.now() })
    .returning('*');
  return row as TestClockRow | undefined;
}

/**
 * The first moment in (after, until] at which a lifecycle step of the sweep has something to do for the clock's
 * customers (TC-3), or `until` when nothing falls due before it. Each term is the earliest instant at which the
 * matching step's own condition holds: a period's end (renewals, trial ends, scheduled cancellations), one
 * millisecond after a due date (overdue is `due_date < asOf`), a dunning retry, a license's expiry, and the
 * reminders' days before a trial's end or a yearly renewal. Auto-charges fall due with the invoices that a moment
 * issues, so that moment's own pass makes them.
 */
export async function nextDueMoment(
  db: Db,
  clockId: string,
  after: Date,
  until: Date,
  reminders: { trialEndingDays: number; renewalNoticeDays: number },
): Promise<Date> {
  const { rows } = await db.raw<{ rows: { at: Date }[] }>(
    `with mine as (select id from customers where test_clock_id = :clock)
     select least(
       (select min(s.current_period_end) from subscriptions s join mine on mine.id = s.customer_id
         where (s.status in ('active', 'trialing', 'past_due') or (s.status = 'paused' and s.cancel_at_period_end))
           and s.current_period_end > :after),
       (select min(i.due_date) + interval '1 millisecond' from invoices i join mine on mine.id = i.customer_id
         where i.status = 'issued' and i.due_date + interval '1 millisecond' > :after),
       (select min(d.next_attempt_at) from dunning_cases d join mine on mine.id = d.customer_id
         where d.status = 'open' and d.next_attempt_at > :after),
       (select min(l.expires_at) from licenses l join mine on mine.id = l.customer_id
         where l.status = 'active' and l.expires_at > :after),
       (select min(s.trial_end - make_interval(days => :trialDays)) from subscriptions s
          join mine on mine.id = s.customer_id
         where s.status = 'trialing' and s.trial_end - make_interval(days => :trialDays) > :after),
       (select min(s.current_period_end - make_interval(days => :noticeDays)) from subscriptions s
          join mine on mine.id = s.customer_id
         where s.status = 'active' and s.billing_cycle = 'yearly' and not s.cancel_at_period_end
           and s.current_period_end - make_interval(days => :noticeDays) > :after),
       :until::timestamptz
     ) as at`,
    {
      clock: clockId,
      after,
      until,
      trialDays: reminders.trialEndingDays,
      noticeDays: reminders.renewalNoticeDays,
    },
  );
  return rows[0]!.at;
}

/** Up to `limit` clocks whose `deletes_after` has passed by `asOf`, oldest first. */
export async function expiredTestClockIds(db: Db, asOf: Date, limit: number): Promise<string[]> {
  const rows: { id: string }[] = await db('test_clocks')
    .where('deletes_after', '<=', asOf)
    .orderBy('deletes_after')
    .limit(limit)
    .select('id');
  return rows.map((r) => r.id);
}

/**
 * Which of the sweep's customer steps may have something to do at `at` for these customers (TC-3): the advance runs
 * only those at that moment (bench/test-clocks.ts: most moments have one step due; each empty step still claimed).
 * Each test is wider than its step's own claim, never narrower: renewals (a period ended), overdue (an issued invoice
 * past due), licenses (an active license expired), auto-charge (an open invoice of a customer with a default
 * provider_a method, or a pending attempt; and whenever renewals run, as their invoices are charged in the same pass),
 * dunning (an open case's retry due), reminders (a trialing or yearly subscription).
 */
export async function dueLifecycleSteps(db: Db, customerIds: string[], at: Date): Promise<Set<string>> {
  const { rows } = await db.raw<{ rows: Record<string, boolean>[] }>(
    `select
       exists (select 1 from subscriptions s where s.customer_id = any(:ids::uuid[])
                 and (s.status in ('active', 'trialing', 'past_due')
                      or (s.status = 'paused' and s.cancel_at_period_end))
                 and s.current_period_end <= :at) as renewals,
       exists (select 1 from invoices i where i.customer_id = any(:ids::uuid[]) and i.status = 'issued'
                 and i.due_date < :at) as overdue,
       exists (select 1 from licenses l where l.customer_id = any(:ids::uuid[]) and l.status = 'active'
                 and l.expires_at <= :at) as licenses,
       -- From the (few) default methods to their customers' open invoices: a lateral probe with a limit is not
       -- flattened into a join, which the planner, misjudging fresh invoices, drove from every open invoice (120 ms).
       exists (select 1 from payment_methods pm
                cross join lateral (select 1 from invoices i where i.customer_id = pm.customer_id
                                       and i.status in ('issued', 'overdue') limit 1) open
                where pm.customer_id = any(:ids::uuid[]) and pm.is_default and pm.type = 'provider_a')
         or exists (select 1 from charge_attempts a join invoices i on i.id = a.invoice_id
                     where a.status = 'pending' and i.customer_id = any(:ids::uuid[])) as "autoCharge",
       exists (select 1 from dunning_cases d where d.customer_id = any(:ids::uuid[]) and d.status = 'open'
                 and d.next_attempt_at <= :at) as dunning,
       exists (select 1 from subscriptions s where s.customer_id = any(:ids::uuid[])
                 and (s.status = 'trialing' or (s.status = 'active' and s.billing_cycle = 'yearly'))) as reminders`,
    { ids: customerIds, at },
  );
  const due = new Set(Object.entries(rows[0]!).flatMap(([step, yes]) => (yes ? [step] : [])));
  if (due.has('renewals')) due.add('autoCharge');
  return due;
}

/** The clock's customers' ids. */
export async function clockCustomerIds(db: Db, clockId: string): Promise<string[]> {
  return db('customers').where({ test_clock_id: clockId }).pluck('id');
}

/** How many customers each clock has. */
export async function countClockCustomerRows(db: Db, clockIds: string[]): Promise<Map<string, number>> {
  if (clockIds.length === 0) return new Map();
  const rows: { test_clock_id: string; n: string }[] = await db('customers')
    .whereIn('test_clock_id', clockIds)
    .groupBy('test_clock_id')
    .select('test_clock_id', db.raw('count(*) as n'));
  return new Map(rows.map((r) => [r.test_clock_id, Number(r.n)]));
}
