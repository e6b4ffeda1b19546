/**
 * What an export's rows name by id, read once per batch (C-17): each row's customer name and, for rows that belong
 * to an invoice, its number. One lookup for every export (invoices, payments, refunds, credit notes,
 * subscriptions) instead of one copy in each.
 */
import { customerNames } from '../../customers/service.ts';
import type { Db } from '../../db/knex.ts';
import { invoiceNumbers } from '../../invoices/service.ts';

export async function namesInBatch(db: Db, rows: readonly { customer_id: string; invoice_id?: string }[]) {
  const invoiceIds = rows.flatMap((r) => (r.invoice_id ? [r.invoice_id] : []));
  const [names, numbers] = await Promise.all([
    customerNames(
      db,
      rows.map((r) => r.customer_id),
    ),
    invoiceIds.length > 0 ? invoiceNumbers(db, invoiceIds) : new Map<string, string>(),
  ]);
  return {
    customerName: (row: { customer_id: string }) => names.get(row.customer_id) ?? '',
    invoiceNumber: (row: { invoice_id: string }) => numbers.get(row.invoice_id) ?? '',
  };
}
