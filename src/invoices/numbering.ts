import type { Db } from '../db/knex.ts';

export type DocumentKind = 'INV' | 'CN';

/**
 * Gapless yearly numbers (D-50, D-58): `{KIND}-{YEAR}-{SEQ}`, SEQ four digits, wider past 9999, restarting
 * at 1 each UTC year. A number is taken by updating the counter row of its kind and year in the creating
 * transaction: the row stays locked until that transaction ends, so numbers are unique, and a rollback gives
 * them back, so they are gapless. Because every creation of a kind queues on that lock, the counter is
 * updated as late as possible: by the statement that also writes the rows carrying the numbers (see
 * repo.ts insertNumberedInvoices), after every read, lock and computation of the creation.
 */

/**
 * A CTE `counter(seq_before)` that claims `count` numbers of one kind and year (bindings: kind, year, count,
 * count): the numbers claimed are seq_before + 1 .. seq_before + count.
 */
export const CLAIM_NUMBERS_CTE = claimNumbersCte('?', '?', '?', '?');

/**
 * CLAIM_NUMBERS_CTE with its kind, year and count given as SQL (placeholders, or literals: db/literal.ts). With
 * `when` (SQL of a condition) nothing is claimed, and `counter` is empty, unless it holds.
 */
export function claimNumbersCte(kind: string, year: string, count: string, countAgain = count, when?: string): string {
  return `counter as (
    insert into document_counters (kind, year, last_seq)
      ${when ? `select ${kind}, ${year}, ${count} where ${when}` : `values (${kind}, ${year}, ${count})`}
    on conflict (kind, year) do update set last_seq = document_counters.last_seq + excluded.last_seq
    returning last_seq - ${countAgain}::integer as seq_before
  )`;
}

/** The SQL of a number from SQL expressions of its kind, year and sequence: the format rule, once. */
export function documentNumberSql(kind: string, year: string, seq: string): string {
  return `(${kind} || '-' || ${year} || '-' || lpad((${seq})::text, greatest(4, length((${seq})::text)), '0'))`;
}

/** The next number of one kind (a credit note), taken in the caller's transaction under the rules above. */
export async function nextDocumentNumber(trx: Db, kind: DocumentKind, at: Date): Promise<string> {
  const year = at.getUTCFullYear();
  const result = await trx.raw(
    `with ${CLAIM_NUMBERS_CTE} select ${documentNumberSql('?::text', '?::text', 'counter.seq_before + 1')} as ` +
      `number from counter`,
    [kind, year, 1, 1, kind, year],
  );
  return result.rows[0].number as string;
}
