/** SQL of dunning cases and charge attempts (D-83). */
import { customerScopeSql, type CustomerScope } from '../db/clock-scope.ts';
import type { Db } from '../db/knex.ts';

export interface DunningCaseRow {
  id: string;
  invoice_id: string;
  subscription_id: string | null;
  customer_id: string;
  status: 'open' | 'resolved' | 'failed';
  /** Failed charges so far: 1 when dunning starts. */
  attempt: number;
  next_attempt_at: Date | null;
  started_at: Date;
  closed_at: Date | null;
}

export interface ChargeAttemptRow {
  id: string;
  invoice_id: string;
  attempt: number;
  idempotency_key: string;
  amount: string;
  currency: string;
  provider_method_id: string;
  status: 'pending' | 'succeeded' | 'declined' | 'canceled';
  provider_reference: string | null;
  failure_reason: string | null;
  created_at: Date;
  completed_at: Date | null;
}

export async function lockOpenCase(db: Db, invoiceId: string): Promise<DunningCaseRow | undefined> {
  return db('dunning_cases').where({ invoice_id: invoiceId, status: 'open' }).forUpdate().first();
}

/** The invoices of a customer's open cases. */
export async function listOpenCaseInvoiceIds(db: Db, customerId: string): Promise<string[]> {
  const rows: { invoice_id: string }[] = await db('dunning_cases')
    .where({ customer_id: customerId, status: 'open' })
    .select('invoice_id');
  return rows.map((r) => r.invoice_id);
}

/** Inserts an open case unless the invoice has one (the partial unique index decides between racers). */
export async function insertOpenCase(
  db: Db,
  row: Pick<
    DunningCaseRow,
    'invoice_id' | 'subscription_id' | 'customer_id' | 'attempt' | 'next_attempt_at' | 'started_at'
  >,
): Promise<DunningCaseRow | undefined> {
  const result = await db.raw<{ rows: DunningCaseRow[] }>(
    `insert into dunning_cases (invoice_id, subscription_id, customer_id, attempt, next_attempt_at, started_at)
     values (?, ?, ?, ?, ?, ?)
     on conflict (invoice_id) where status = 'open' do nothing
     returning *`,
    [row.invoice_id, row.subscription_id, row.customer_id, row.attempt, row.next_attempt_at, row.started_at],
  );
  return result.rows[0];
}

export async function updateCase(
  db: Db,
  id: string,
  changes: Partial<Pick<DunningCaseRow, 'status' | 'attempt' | 'next_attempt_at' | 'closed_at'>>,
): Promise<DunningCaseRow> {
  const [row] = await db('dunning_cases').where({ id }).update(changes).returning('*');
  return row as DunningCaseRow;
}

/** Open cases whose next retry is due, locked, skipping those another sweep holds. */
export async function claimDueCases(
  db: Db,
  asOf: Date,
  limit: number,
  scope: CustomerScope,
): Promise<DunningCaseRow[]> {
  const inScope = customerScopeSql(scope, 'dunning_cases.customer_id');
  return db('dunning_cases')
    .where({ status: 'open' })
    .where('next_attempt_at', '<=', asOf)
    .whereRaw(inScope.sql, inScope.bindings)
    .orderBy('next_attempt_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .select('*');
}

export interface ChargeCandidate {
  invoice_id: string;
  amount_due: string;
  currency: string;
  provider_method_id: string;
}

/**
 * Open invoices with something due whose customer has a default provider_a method, never charged and
 * never in dunning (a case a provider's failure report started, even one that has ended, is the invoice's
 * only way to be charged: dunning retries): the invoices are locked (skipping ones another sweep or a payment holds).
 */
export async function claimChargeCandidates(db: Db, limit: number, scope: CustomerScope): Promise<ChargeCandidate[]> {
  const inScope = customerScopeSql(scope, 'i.customer_id');
  const result = await db.raw<{ rows: ChargeCandidate[] }>(
    `select i.id as invoice_id,
            (i.total - i.amount_paid - i.credit_applied - i.credited_amount)::text as amount_due,
            i.currency, pm.provider_method_id
       from invoices i
       join payment_methods pm on pm.customer_id = i.customer_id and pm.is_default and pm.type = 'provider_a'
      where i.status in ('issued', 'overdue')
        and i.total - i.amount_paid - i.credit_applied - i.credited_amount > 0
        and not exists (select 1 from charge_attempts a where a.invoice_id = i.id)
        and not exists (select 1 from dunning_cases d where d.invoice_id = i.id)
        and ${inScope.sql}
      order by i.created_at, i.id
      limit ?
      for update of i skip locked`,
    [...inScope.bindings, limit],
  );
  return result.rows;
}

export async function insertChargeAttempts(
  db: Db,
  rows: Pick<
    ChargeAttemptRow,
    'invoice_id' | 'attempt' | 'idempotency_key' | 'amount' | 'currency' | 'provider_method_id'
  >[],
): Promise<void> {
  if (rows.length === 0) return;
  await db('charge_attempts').insert(rows).onConflict(['invoice_id', 'attempt']).ignore();
}

/** Pending attempts (new ones, and any a crashed process left), locked one by one by their callers. */
export async function listPendingAttemptIds(
  db: Db,
  limit: number,
  exclude: string[],
  scope: CustomerScope,
): Promise<string[]> {
  const inScope = customerScopeSql(scope, 'scope_i.customer_id');
  const query = db('charge_attempts')
    .where({ status: 'pending' })
    .whereRaw(
      `exists (select 1 from invoices scope_i where scope_i.id = charge_attempts.invoice_id and ${inScope.sql})`,
      inScope.bindings,
    )
    .orderBy('created_at')
    .limit(limit);
  if (exclude.length > 0) query.whereNotIn('id', exclude);
  return (await query.select('id')).map((r: { id: string }) => r.id);
}

export async function lockPendingAttempt(db: Db, id: string): Promise<ChargeAttemptRow | undefined> {
  return db('charge_attempts').where({ id, status: 'pending' }).forUpdate().skipLocked().first();
}

export async function finishAttempt(
  db: Db,
  id: string,
  changes: Pick<ChargeAttemptRow, 'status' | 'provider_reference' | 'failure_reason' | 'completed_at'>,
): Promise<void> {
  await db('charge_attempts').where({ id }).update(changes);
}

export async function findDefaultProviderAMethod(db: Db, customerId: string): Promise<string | undefined> {
  const row = await db('payment_methods')
    .where({ customer_id: customerId, is_default: true, type: 'provider_a' })
    .first('provider_method_id');
  return row?.provider_method_id;
}
