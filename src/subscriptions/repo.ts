import type { StatementGuard } from '../db/fast-query.ts';
import type { Db } from '../db/knex.ts';
import { inlined, jsonLiteral, LiteralValues, textLiteral, type LiteralStatement } from '../db/literal.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';
import type { BillingCycle } from './periods.ts';

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

/**
 * insertSubscriptionRow of the plan read by `reads.plan` (a CTE body of the plan whose id is the SQL it is given,
 * answering columns named `plan.<column>`), as ONE statement: the row is written only when that plan is active and
 * bills the row's cycle, and the answer is the plan's columns beside the row's (the row's all null when it was not
 * written) and, as column `also`, the value of the expression `reads.also` (another read the caller needs). A
 * LiteralStatement: its text is the same for every row of the same columns (the plan id and the row are its values),
 * so a connection can prepare it once (db/hot-lock.ts). `reads.lockCustomer` (SQL of a lock of the customer whose id
 * is the text it is given) is evaluated once for a written row, by its RETURNING: a row refused takes no lock. The
 * customer is checked by the foreign key, as insertSubscriptionRow. readSubscriptionOfPlan reads its answer (after the
 * guard's `accept`, when it has one).
 */
export function subscriptionOfPlanStatement(
  reads: { plan: (idSql: string) => string; also?: string; lockCustomer?: (customerIdSql: string) => string },
  planId: string,
  row: Omit<SubscriptionInsert, 'plan_id' | 'coupon_id'>,
  guardOf?: (values: LiteralValues) => StatementGuard,
): LiteralStatement {
  const values = new LiteralValues();
  // With a guard (the request's session checked by this statement, db/hot-lock.ts): nothing is written unless it
  // admits, and the answer is the guard's.
  const guard = guardOf?.(values);
  const columns = Object.keys(row);
  const planIdSql = values.add(textLiteral(planId), 'uuid');
  const finalSelect = `select created.*, plan.*, ${reads.also ?? 'null'} as also from plan left join created on true`;
  // jsonb_populate_record types each value as its column does.
  const text = `with ${guard ? `${guard.ctes}, ` : ''}plan as (${reads.plan(planIdSql)}),
     created as (
       insert into subscriptions (plan_id, ${columns.join(', ')})
       select plan."plan.id", ${columns.map((c) => `r.${c}`).join(', ')}
         from plan, jsonb_populate_record(null::subscriptions, ${values.add(jsonLiteral(row), 'jsonb')}) r
        where plan."plan.active" and plan."plan.billing_cycle" = r.billing_cycle${guard ? ` and ${guard.admits}` : ''}
       returning *${reads.lockCustomer ? `, ${reads.lockCustomer('customer_id::text')} as "customer.locked"` : ''})
     ${guard ? guard.answer(finalSelect) : finalSelect}`;
  return { text, values: values.values };
}

/** subscriptionOfPlanStatement run on `db` (its values written into its text), answered as readSubscriptionOfPlan. */
export async function insertSubscriptionOfPlan(
  db: Db,
  reads: { plan: (idSql: string) => string; also?: string },
  planId: string,
  row: Omit<SubscriptionInsert, 'plan_id' | 'coupon_id'>,
) {
  const result = (await db.raw(inlined(subscriptionOfPlanStatement(reads, planId, row)))) as {
    rows: Record<string, unknown>[];
  };
  return readSubscriptionOfPlan(result.rows);
}

/** The answer of subscriptionOfPlanStatement: undefined when there is no such plan (then nothing was written). */
export function readSubscriptionOfPlan(
  rows: Record<string, unknown>[],
): { answer: Record<string, unknown>; created: SubscriptionRow | undefined } | undefined {
  const answer = rows[0];
  if (!answer) return undefined;
  if (answer.id == null) return { answer, created: undefined };
  // The row's own columns: the plan's are named `plan.<column>` (plans/service.ts planReadPart).
  const created: Record<string, unknown> = {};
  for (const key in answer) if (!key.includes('.') && key !== 'also') created[key] = answer[key];
  return { answer, created: created as unknown as SubscriptionRow };
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

export async function listSubscriptionRows(
  db: Db,
  page: PageQuery,
  filters: { customerId?: string; status?: string; planId?: string },
): Promise<Page<SubscriptionRow>> {
  const query = db('subscriptions').select('*');
  if (filters.customerId) query.where({ customer_id: filters.customerId });
  if (filters.status) query.where({ status: filters.status });
  if (filters.planId) query.where({ plan_id: filters.planId });
  return paginate<SubscriptionRow>(query, 'subscriptions', page);
}
