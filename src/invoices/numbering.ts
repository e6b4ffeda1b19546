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

/**
 * `count` consecutive numbers of one kind and year with one counter update (a batch of invoices),
 * under the same rules as nextDocumentNumber: locked until commit, returned by a rollback.
 */
export async function reserveDocumentNumbers(trx: Db, kind: DocumentKind, at: Date, count: number): Promise<string[]> {
  if (count <= 0) return [];
  const year = at.getUTCFullYear();
  const result = await trx.raw(
    `insert into document_counters (kind, year, last_seq) values (?, ?, ?)
     on conflict (kind, year) do update set last_seq = document_counters.last_seq + excluded.last_seq
     returning last_seq`,
    [kind, year, count],
  );
  const last = result.rows[0].last_seq as number;
  return Array.from({ length: count }, (_, i) => `${kind}-${year}-${String(last - count + 1 + i).padStart(4, '0')}`);
}
