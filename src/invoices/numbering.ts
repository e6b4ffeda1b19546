import type { Db } from '../db/knex.ts';

export type DocumentKind = 'INV' | 'CN';

/**
 * The next `{KIND}-{YEAR}-{SEQ}` number (D-50, D-58), taken in the caller's transaction: the counter
 * row stays locked until it commits, so numbers are unique, and a rollback returns its number, so
 * they are gapless. SEQ is four digits, wider past 9999; it restarts at 1 each UTC year.
 */
export async function nextDocumentNumber(trx: Db, kind: DocumentKind, at: Date): Promise<string> {
  const year = at.getUTCFullYear();
  const result = await trx.raw(
    `insert into document_counters (kind, year, last_seq) values (?, ?, 1)
     on conflict (kind, year) do update set last_seq = document_counters.last_seq + 1
     returning last_seq`,
    [kind, year],
  );
  const seq = result.rows[0].last_seq as number;
  return `${kind}-${year}-${String(seq).padStart(4, '0')}`;
}
