/**
 * Deleting a test clock (TC-1) removes every record of its customers, in the order their foreign keys need, in the
 * caller's transaction. This is the one place that deletes across domains' tables: the records exist only for the
 * clock, and a test clock's customers are the only customers whose billing history may be erased (a real customer
 * with invoices cannot be deleted, D-22). Their invoices have their own numbering (TST, docs/decisions.md issue 39),
 * so erasing them leaves no gap in the real invoices' numbers (D-50). Audit rows stay: the audit log is append-only.
 */
import type { Db } from '../db/knex.ts';

const CUSTOMERS = 'select id from customers where test_clock_id = :clock';
const INVOICES = `select id from invoices where customer_id in (${CUSTOMERS})`;

/** Statements run in order; each names the clock as :clock. */
const DELETES = [
  `delete from charge_attempts where invoice_id in (${INVOICES})`,
  `delete from dunning_cases where customer_id in (${CUSTOMERS})`,
  `delete from checkout_sessions where invoice_id in (${INVOICES})`,
  `delete from provider_credits where customer_id in (${CUSTOMERS})`,
  `delete from credit_ledger where customer_id in (${CUSTOMERS})`,
  `delete from refunds where payment_id in (select id from payments where customer_id in (${CUSTOMERS}))`,
  `delete from credit_notes where customer_id in (${CUSTOMERS})`,
  `delete from payments where customer_id in (${CUSTOMERS})`,
  `delete from usage_billings where customer_id in (${CUSTOMERS})`,
  `delete from usage_aggregates where customer_id in (${CUSTOMERS})`,
  `delete from usage_unique_values where customer_id in (${CUSTOMERS})`,
  `delete from usage_events where customer_id in (${CUSTOMERS})`,
  `delete from usage_event_keys where customer_id in (${CUSTOMERS})`,
  // Lines, PDFs and hosted links go with their invoice (on delete cascade).
  `delete from invoices where customer_id in (${CUSTOMERS})`,
  `delete from licenses where customer_id in (${CUSTOMERS})`,
  `delete from subscriptions where customer_id in (${CUSTOMERS})`,
  // Their webhook deliveries go with them; by the events_customer expression index.
  `delete from events where (data->>'customerId') in (select id::text from customers where test_clock_id = :clock)`,
  // Payment methods, API keys and emails go with their customer.
  `delete from customers where test_clock_id = :clock`,
];

/** Deletes the clock's customers with all their records, then the clock; answers how many customers went. */
export async function deleteClockAndRecords(trx: Db, clockId: string): Promise<number> {
  const customers = await trx('customers').where({ test_clock_id: clockId }).count<{ n: string }[]>('* as n');
  for (const sql of DELETES) await trx.raw(sql, { clock: clockId });
  await trx('test_clocks').where({ id: clockId }).delete();
  return Number(customers[0]!.n);
}
