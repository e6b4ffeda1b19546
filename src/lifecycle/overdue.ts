import { SYSTEM_ACTOR } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { REAL_CUSTOMERS, type CustomerScope } from '../db/clock-scope.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { recordEvents } from '../events/service.ts';
import { invoiceEventData } from '../invoices/events.ts';
import { markOverdueInvoices as moveOverdue } from '../invoices/service.ts';

/**
 * D-52: issued invoices whose due date passed by `asOf` become `overdue`, each recording `invoice.overdue`
 * in the transaction that moves it, in bounded batches. The move happens once per invoice (only `issued`
 * rows move), so the event is recorded once however many sweeps run. Each move is an `invoice.overdue`
 * audit row by `system` (C-11), written set-wise with the batch.
 */
export async function markOverdueInvoices(
  db: Db,
  asOf: Date,
  batchSize = 500,
  onBatch?: () => Promise<void>,
  scope: CustomerScope = REAL_CUSTOMERS,
): Promise<number> {
  let total = 0;
  for (;;) {
    const marked = await inTransaction(db, async (trx) => {
      const rows = await moveOverdue(trx, asOf, batchSize, scope);
      await recordEvents(
        trx,
        rows.map((row) => ({ type: 'invoice.overdue' as const, data: invoiceEventData(row) })),
      );
      await recordAudits(
        trx,
        SYSTEM_ACTOR,
        rows.map((row) => ({
          action: 'invoice.overdue',
          targetType: 'invoice',
          targetId: row.id,
          before: { status: 'issued' },
          after: { status: row.status },
        })),
      );
      return rows.length;
    });
    total += marked;
    await onBatch?.();
    if (marked < batchSize) return total;
  }
}
