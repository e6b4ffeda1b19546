import type { Db } from '../db/knex.ts';
import { type PreparedStatement, queryPrepared } from '../db/prepared.ts';
import { paginate, type Page, type PageQuery, type SortColumns } from '../db/paginate.ts';
import type { BillingCycle } from '../plans/cycles.ts';

export type SubscriptionStatus = 'active' | 'paused' | 'canceled' | 'past_due' | 'trialing';

export interface SubscriptionRow {
  id: string;
  customer_id: string;
  plan_id: string;
  status: SubscriptionStatus;
  billing_cycle: BillingCycle;
  billing_anchor: Date;
  period_number: number;
  current_period_start: Date;
  current_period_end: Date;
  cancel_at_period_end: boolean;
  canceled_at: Date | null;
  paused_at: Date | null;
  trial_end: Date | null;
  coupon_id: string | null;
  coupon_cycles_used: number;
  created_at: Date;
  updated_at: Date;
}

export type SubscriptionInsert = Omit<
  SubscriptionRow,
  'id' | 'cancel_at_period_end' | 'canceled_at' | 'paused_at' | 'coupon_cycles_used' | 'created_at' | 'updated_at'
> & {
  created_at?: Date;
  coupon_cycles_used?: number;
};

/**
 * The foreign key that refuses a subscription of a customer that does not exist (creation answers customer_not_found).
 */
export const SUBSCRIPTION_CUSTOMER_FK = 'subscriptions_customer_id_fkey';
export type SubscriptionChanges = Partial<Omit<SubscriptionRow, 'id' | 'customer_id' | 'created_at' | 'updated_at'>>;

export async function insertSubscriptionRow(db: Db, row: SubscriptionInsert): Promise<SubscriptionRow> {
  const [created] = await db('subscriptions').insert(row).returning('*');
  return created as SubscriptionRow;
}

export async function findSubscriptionRow(db: Db, id: string): Promise<SubscriptionRow | undefined> {
  return db('subscriptions').where({ id }).first();
}

/** The subscription locked for the rest of the transaction: its changes and renewals happen one at a time. */
export async function lockSubscriptionRow(db: Db, id: string): Promise<SubscriptionRow | undefined> {
  return db('subscriptions').where({ id }).forUpdate().first();
}

export async function updateSubscriptionRow(
  db: Db,
  id: string,
  changes: SubscriptionChanges,
): Promise<SubscriptionRow> {
  const [row] = await db('subscriptions')
    .where({ id })
    .update({ ...changes, updated_at: db.fn.now() })
    .returning('*');
  return row as SubscriptionRow;
}

/** The columns the console's subscription list sorts by (C-15); no trial sorts after every trial's end. */
export const SUBSCRIPTION_SORTS: SortColumns = {
  status: 'status',
  cycle: 'billing_cycle',
  currentPeriodEnd: 'current_period_end',
  trialEnd: "coalesce(trial_end, 'infinity'::timestamptz)",
  createdAt: 'created_at',
};

export async function listSubscriptionRows(
  db: Db,
  page: PageQuery,
  filters: { customerId?: string; status?: string; planId?: string },
): Promise<Page<SubscriptionRow>> {
  const query = db('subscriptions').select('*');
  if (filters.customerId) query.where({ customer_id: filters.customerId });
  if (filters.status) query.where({ status: filters.status });
  if (filters.planId) query.where({ plan_id: filters.planId });
  return paginate<SubscriptionRow>(query, 'subscriptions', page, SUBSCRIPTION_SORTS);
}

export async function customerPlanIdRows(db: Db, customerId: string): Promise<string[]> {
  const rows = await db('subscriptions').distinct('plan_id').where({ customer_id: customerId });
  return rows.map((r: { plan_id: string }) => r.plan_id);
}

/** Every column of SubscriptionRow, named: a prepared statement's `*` would break when a migration adds one. */
const SUBSCRIPTION_COLUMNS = `id, customer_id, plan_id, status, billing_cycle, billing_anchor, period_number,
  current_period_start, current_period_end, cancel_at_period_end, canceled_at, paused_at, trial_end, coupon_id,
  coupon_cycles_used, created_at, updated_at`;

/**
 * Prepared (db/prepared.ts): usage ingestion reads the customer's subscriptions on every batch, and knex's builder,
 * compiler and an unnamed statement's planning were a tenth of its web process's CPU at batches of 100 (issue 35).
 */
const SUBSCRIPTIONS_OF_CUSTOMERS: PreparedStatement = {
  name: 'subscriptions_of_customers',
  text: `select ${SUBSCRIPTION_COLUMNS} from subscriptions where customer_id = any($1::uuid[])
    order by created_at, id`,
};

export async function listSubscriptionRowsOfCustomers(db: Db, customerIds: string[]): Promise<SubscriptionRow[]> {
  if (customerIds.length === 0) return [];
  return queryPrepared<SubscriptionRow>(db, SUBSCRIPTIONS_OF_CUSTOMERS, [[...new Set(customerIds)]]);
}
