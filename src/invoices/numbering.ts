import type { Db } from '../db/knex.ts';
import { claimDocumentNumber } from './repo.ts';

/** `TCN`: a test clock's customers' credit notes, numbered apart as their invoices are `TST` (issue 39). */
export type DocumentKind = 'INV' | 'CN' | 'TCN';

/**
 * Gapless yearly numbers (D-50, D-58): `{KIND}-{YEAR}-{SEQ}`, SEQ four digits, wider past 9999, restarting
 * at 1 each UTC year. A number is taken by updating the counter row of its kind and year in the creating
 * transaction: the row stays locked until that transaction ends, so numbers are unique, and a rollback gives
 * them back, so they are gapless. Because every creation of a kind queues on that lock, the counter is
 * updated as late as possible: invoices take theirs in the statement that inserts them (repo.ts
 * insertNumberedInvoices), after every read, lock and computation of the creation (issue.ts).
 */

/** The next number of one kind (a credit note), taken in the caller's transaction under the rules above. */
export function nextDocumentNumber(trx: Db, kind: DocumentKind, at: Date): Promise<string> {
  return claimDocumentNumber(trx, kind, at.getUTCFullYear());
}
