import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';
import type { BillingCycle } from './cycles.ts';

export interface PlanRow {
  id: string;
  product_id: string;
  name: string;
  pricing_model: 'flat' | 'usage' | 'hybrid';
  billing_cycle: BillingCycle;
  base_price: string;
  currency: string;
  /** T-2: the rates of this plan's subscription lines (else the customer's). */
  tax_rate_ids: string[];
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

export async function insertPlanRow(
  db: Db,
  row: Omit<PlanRow, 'id' | 'active' | 'created_at' | 'updated_at'>,
): Promise<PlanRow> {
  const [created] = await db('plans').insert(row).returning('*');
  return created as PlanRow;
}

export async function findPlanRow(db: Db, id: string): Promise<PlanRow | undefined> {
  return db('plans').where({ id }).first();
}

/** Locks the plan row for the rest of the transaction and answers it (undefined when there is none). */
export async function lockPlanRow(db: Db, id: string): Promise<PlanRow | undefined> {
  return db('plans').where({ id }).forUpdate().first();
}

export async function listPlanRows(
  db: Db,
  page: PageQuery,
  filters: { productId?: string; active?: boolean },
): Promise<Page<PlanRow>> {
  const query = db('plans').select('*');
  if (filters.productId) query.where({ product_id: filters.productId });
  if (filters.active !== undefined) query.where({ active: filters.active });
  return paginate<PlanRow>(query, 'plans', page);
}

export async function updatePlanRow(
  db: Db,
  id: string,
  changes: Partial<Pick<PlanRow, 'name' | 'active' | 'tax_rate_ids'>>,
): Promise<PlanRow | undefined> {
  const [row] = await db('plans')
    .where({ id })
    .update({ ...changes, updated_at: db.fn.now() })
    .returning('*');
  return row as PlanRow | undefined;
}

/** The plans of these products, oldest first, in one query (a page of products lists each one's plans). */
export async function listPlanRowsOfProducts(db: Db, productIds: string[]): Promise<PlanRow[]> {
  if (productIds.length === 0) return [];
  return db('plans')
    .whereIn('product_id', [...new Set(productIds)])
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select('*');
}

export async function findPlanRows(db: Db, ids: string[]): Promise<Map<string, PlanRow>> {
  const rows: PlanRow[] =
    ids.length === 0
      ? []
      : await db('plans')
          .whereIn('id', [...new Set(ids)])
          .select('*');
  return new Map(rows.map((r) => [r.id, r]));
}
