import type { Db } from '../db/knex.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../http/schemas.ts';
import { assertProductExists } from '../products/service.ts';
import { findPlanRow, findPlanRows, insertPlanRow, listPlanRows, updatePlanRow, type PlanRow } from './repo.ts';
import type { CreatePlanInput } from './schema.ts';

export async function createPlan(db: Db, input: CreatePlanInput): Promise<PlanRow> {
  await assertProductExists(db, input.productId);
  return insertPlanRow(db, {
    product_id: input.productId,
    name: input.name,
    pricing_model: input.pricingModel,
    billing_cycle: input.billingCycle,
    base_price: input.basePrice,
    currency: input.currency,
  });
}

export function listPlans(db: Db, page: PageQuery, filters: { productId?: string; active?: boolean }) {
  return listPlanRows(db, page, filters);
}

export async function getPlan(db: Db, id: string): Promise<PlanRow> {
  const row = await findPlanRow(db, id);
  if (!row) throw notFound('Plan');
  return row;
}

export async function updatePlan(db: Db, id: string, changes: { name?: string; active?: boolean }): Promise<PlanRow> {
  if (changes.name === undefined && changes.active === undefined) return getPlan(db, id);
  const row = await updatePlanRow(db, id, changes);
  if (!row) throw notFound('Plan');
  return row;
}

/** A plan a body names: 400 plan_not_found when unknown (D-2). */
export async function requirePlan(db: Db, id: string, path: string): Promise<PlanRow> {
  const plan = await findPlanRow(db, id);
  if (!plan) throw new AppError('plan_not_found', `Plan ${id} does not exist`, { details: [{ path, message: 'no such plan' }] });
  return plan;
}

/** Many plans by id in one query (a renewal batch's). */
export function findPlans(db: Db, ids: string[]): Promise<Map<string, PlanRow>> {
  return findPlanRows(db, ids);
}
