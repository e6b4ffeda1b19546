import type { Knex } from 'knex';
import type { TestApp } from '../helpers/app.ts';
import { request } from '../helpers/http.ts';

export const CRON_SECRET = 'cron-secret-for-tests-0123456789';

export const at = (s: string) => new Date(s.length === 10 ? `${s}T00:00:00.000Z` : s);

/** POST /api/billing/cron/lifecycle with the right secret (unless `secret` says otherwise). */
export function cron(app: TestApp, options: { asOf?: string; wait?: boolean; secret?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (options.secret !== null) headers['x-cron-secret'] = options.secret ?? CRON_SECRET;
  return request(app.baseUrl, `/api/billing/cron/lifecycle${options.wait ? '?wait=true' : ''}`, {
    method: 'POST',
    headers,
    body: options.asOf ? { asOf: options.asOf } : {},
  });
}

/** `YYYY-MM-DD` of a timestamp. */
export const day = (d: Date) => d.toISOString().slice(0, 10);

export async function countRows(
  db: Knex,
  table: string,
  where: (q: Knex.QueryBuilder) => void = () => {},
): Promise<number> {
  const q = db(table);
  where(q);
  return Number((await q.count<{ n: string }[]>('* as n'))[0]!.n);
}

/**
 * Every invoice number of each year is 1..N with none missing or repeated (D-50).
 * Answers the problems found, [] when gapless.
 */
export async function numberingProblems(db: Knex): Promise<string[]> {
  const rows: { invoice_number: string }[] = await db('invoices').select('invoice_number');
  const byYear = new Map<string, number[]>();
  for (const { invoice_number } of rows) {
    const [, year, seq] = /^INV-(\d{4})-(\d+)$/.exec(invoice_number)!;
    byYear.set(year!, [...(byYear.get(year!) ?? []), Number(seq)]);
  }
  const problems: string[] = [];
  for (const [year, seqs] of byYear) {
    seqs.sort((a, b) => a - b);
    seqs.forEach((s, i) => {
      if (s !== i + 1) problems.push(`${year}: expected ${i + 1}, found ${s}`);
    });
  }
  return problems;
}
