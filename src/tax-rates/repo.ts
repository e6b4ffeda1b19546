import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';

export interface TaxRateRow {
  id: string;
  name: string;
  percentage: string;
  inclusive: boolean;
  country: string | null;
  description: string | null;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

export type TaxRateInsert = Pick<TaxRateRow, 'name' | 'percentage' | 'inclusive' | 'country' | 'description'>;
export type TaxRateChanges = Partial<Pick<TaxRateRow, 'name' | 'description' | 'active'>>;

export async function insertTaxRateRow(db: Db, row: TaxRateInsert): Promise<TaxRateRow> {
  const [created] = await db('tax_rates').insert(row).returning('*');
  return created as TaxRateRow;
}

export function listTaxRateRows(db: Db, page: PageQuery, filters: { active?: boolean }): Promise<Page<TaxRateRow>> {
  const query = db('tax_rates').select('*');
  if (filters.active !== undefined) query.where({ active: filters.active });
  return paginate<TaxRateRow>(query, 'tax_rates', page);
}

export async function findTaxRateRow(db: Db, id: string): Promise<TaxRateRow | undefined> {
  return db('tax_rates').where({ id }).first();
}

export async function lockTaxRateRow(db: Db, id: string): Promise<TaxRateRow | undefined> {
  return db('tax_rates').where({ id }).forUpdate().first();
}

export async function updateTaxRateRow(db: Db, id: string, changes: TaxRateChanges): Promise<TaxRateRow> {
  const [row] = await db('tax_rates')
    .where({ id })
    .update({ ...changes, updated_at: db.fn.now() })
    .returning('*');
  return row as TaxRateRow;
}

/** Many rates by id in one query (an invoice batch's). */
export async function findTaxRateRows(db: Db, ids: readonly string[]): Promise<Map<string, TaxRateRow>> {
  const unique = [...new Set(ids)];
  const rows: TaxRateRow[] = unique.length === 0 ? [] : await db('tax_rates').whereIn('id', unique).select('*');
  return new Map(rows.map((r) => [r.id, r]));
}
