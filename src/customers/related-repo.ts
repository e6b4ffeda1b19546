/** What a customer is linked to in other domains' tables: subscriptions, invoices, payments, the credit ledger. */
import type { Db } from '../db/knex.ts';
import type { SubscriptionRow } from '../subscriptions/repo.ts';

/** True when invoices or payments name the customer (D-22: such a customer cannot be deleted). */
export async function customerHasBillingHistory(db: Db, customerId: string): Promise<boolean> {
  const result = await db.raw<{ rows: { found: boolean }[] }>(
    'select exists (select 1 from invoices where customer_id = ?) ' +
      'or exists (select 1 from payments where customer_id = ?) as found',
    [customerId, customerId],
  );
  return result.rows[0]?.found ?? false;
}

/** The customer's subscriptions, oldest first. */
export async function listCustomerSubscriptionRows(db: Db, customerId: string): Promise<SubscriptionRow[]> {
  return db('subscriptions')
    .where({ customer_id: customerId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select('*');
}

/**
 * D-22 health score of the customers whose ids `ids` (a SQL expression of uuid rows named `id`) yields,
 * as of `:at`: 100, minus 25 per overdue invoice, 20 per past-due subscription and 10 per failed payment
 * (a `payment.failed` event, whatever recorded it) in the 90 days up to `at`; never below 0.
 * One definition for the answers (derived on read) and for the sweep's stored snapshot.
 */
const healthScoreSql = (ids: string) => `
  select c.id,
         cast(greatest(0, 100
           - 25 * (select count(*) from invoices i where i.customer_id = c.id and i.status = 'overdue')
           - 20 * (select count(*) from subscriptions s where s.customer_id = c.id and s.status = 'past_due')
           - 10 * (select count(*) from events e
                     where e.type = 'payment.failed' and e.data->>'customerId' = cast(c.id as text)
                       and e.created_at > cast(:at as timestamptz) - interval '90 days'
                       and e.created_at <= cast(:at as timestamptz))
         ) as integer) as score
    from ${ids} as c`;

/** Each customer's health score now (D-22), for a page of customers in one query. */
export async function customerHealthScores(
  db: Db,
  customerIds: string[],
  at: Date = new Date(),
): Promise<Map<string, number>> {
  if (customerIds.length === 0) return new Map();
  const result = await db.raw<{ rows: { id: string; score: number }[] }>(
    healthScoreSql('(select unnest(cast(:ids as uuid[])) as id)'),
    { ids: customerIds, at },
  );
  return new Map(result.rows.map((r) => [r.id, r.score]));
}

/**
 * Stores every customer's health score as of `at` in `customers.health_score` in one statement, writing
 * only rows whose score changed; answers how many changed. Answers never read this column (they derive
 * the score), it is a snapshot for reporting queries, refreshed by the lifecycle sweep.
 */
export async function storeHealthScores(db: Db, at: Date): Promise<number> {
  const result = await db.raw<{ rowCount: number }>(
    `update customers set health_score = scores.score
       from (${healthScoreSql('customers')}) as scores
      where scores.id = customers.id and customers.health_score <> scores.score`,
    { at },
  );
  return result.rowCount ?? 0;
}
