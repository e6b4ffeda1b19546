import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../db/paginate.ts';
import { assertCurrencyPrecision } from '../money-input.ts';
import { assertProductExists } from '../products/service.ts';
import { requireUsableTaxRates } from '../tax-rates/service.ts';
import {
  findPlanRow,
  findPlanRows,
  insertPlanRow,
  listPlanRows,
  listPlanRowsOfProducts,
  lockPlanRow,
  updatePlanRow,
  type PlanRow,
} from './repo.ts';
import type { CreatePlanInput, PlanWithCharges } from './schema.ts';
import { serialiseCharge } from '../metering/charge-schema.ts';
import { assertCharges, chargesOfPlans, insertCharges } from '../metering/charges.ts';
import { money } from '../money.ts';

/** A plan's fields as the audit log records them: all a plan is (its price never changes, D-40). */
function audited(row: PlanRow): Record<string, unknown> {
  const { product_id, name, pricing_model, billing_cycle, base_price, currency, active, tax_rate_ids } = row;
  return { product_id, name, pricing_model, billing_cycle, base_price, currency, active, tax_rate_ids };
}

/** U-3: a usage plan's price is its charges alone. */
function assertBasePriceFits(input: CreatePlanInput): void {
  if (input.pricingModel === 'usage' && !money(input.basePrice).isZero())
    throw new AppError('invalid_request', 'A usage plan has no base price', {
      details: [{ path: 'basePrice', message: 'must be "0" for pricingModel usage (use hybrid for both)' }],
    });
}

export function createPlan(db: Db, input: CreatePlanInput, actor: Actor): Promise<PlanWithCharges> {
  return inTransaction(db, async (trx) => {
    assertCurrencyPrecision(input.basePrice, input.currency, 'basePrice');
    assertBasePriceFits(input);
    await assertCharges(trx, input.pricingModel, input.charges ?? [], input.currency);
    await assertProductExists(trx, input.productId);
    await requireUsableTaxRates(trx, input.taxRateIds ?? [], 'taxRateIds');
    const created = await insertPlanRow(trx, {
      tax_rate_ids: input.taxRateIds ?? [],
      product_id: input.productId,
      name: input.name,
      pricing_model: input.pricingModel,
      billing_cycle: input.billingCycle,
      base_price: input.basePrice,
      currency: input.currency,
    });
    const charges = await insertCharges(trx, created.id, input.charges ?? []);
    await recordAudits(trx, actor, [
      {
        action: 'plan.create',
        targetType: 'plan',
        targetId: created.id,
        after: { ...audited(created), ...(charges.length > 0 ? { charges: charges.map(serialiseCharge) } : {}) },
      },
    ]);
    return { ...created, charges };
  });
}

export function listPlans(db: Db, page: PageQuery, filters: { productId?: string; active?: boolean }) {
  return listPlanRows(db, page, filters);
}

/** A page of plans, each with its usage charges (the API's list). */
export async function listPlansWithCharges(db: Db, page: PageQuery, filters: { productId?: string; active?: boolean }) {
  const plans = await listPlanRows(db, page, filters);
  return { ...plans, rows: await withCharges(db, plans.rows) };
}

/**
 * A plan's currency, kept per process: it is part of the plan's price, which never changes (D-40). The usage read
 * (U-9), whose bench missed its p99 aim, needs nothing else of the plan: one round trip fewer a read. Bounded.
 */
const currencies = new Map<string, string>();
export async function planCurrency(db: Db, id: string): Promise<string> {
  let currency = currencies.get(id);
  if (currency === undefined) {
    currency = (await getPlan(db, id)).currency;
    if (currencies.size >= 10_000) currencies.clear();
    currencies.set(id, currency);
  }
  return currency;
}

export async function getPlan(db: Db, id: string): Promise<PlanRow> {
  const row = await findPlanRow(db, id);
  if (!row) throw notFound('Plan');
  return row;
}

/** Plans with their usage charges (the API's answers), in one more query. */
export async function withCharges(db: Db, plans: PlanRow[]): Promise<PlanWithCharges[]> {
  const charges = await chargesOfPlans(
    db,
    plans.map((p) => p.id),
  );
  return plans.map((p) => ({ ...p, charges: charges.get(p.id) ?? [] }));
}

/** A plan with its usage charges (U-3). */
export async function getPlanWithCharges(db: Db, id: string): Promise<PlanWithCharges> {
  return (await withCharges(db, [await getPlan(db, id)]))[0]!;
}

/**
 * Renames or (de)activates a plan, or changes the tax rates of its next invoices (D-40: its price never changes;
 * T-5: issued invoices keep theirs).
 */
export async function updatePlan(
  db: Db,
  id: string,
  input: { name?: string; active?: boolean; taxRateIds?: string[] },
  actor: Actor,
): Promise<PlanWithCharges> {
  const changes = { name: input.name, active: input.active, tax_rate_ids: input.taxRateIds };
  const nothing = Object.values(changes).every((v) => v === undefined);
  return inTransaction(db, async (trx) => {
    const before = await lockPlanRow(trx, id);
    if (!before) throw notFound('Plan');
    await requireUsableTaxRates(trx, input.taxRateIds ?? [], 'taxRateIds');
    // An accepted update is an admin action even when it changes nothing: it is recorded (with no field).
    const after = nothing ? before : (await updatePlanRow(trx, id, changes))!;
    await recordAudits(trx, actor, [
      {
        action: 'plan.update',
        targetType: 'plan',
        targetId: id,
        before: audited(before),
        after: audited(after),
      },
    ]);
    return (await withCharges(trx, [after]))[0]!;
  });
}

/** The 400 of a body naming an unknown plan (D-2). */
export const planNotFound = (id: string, path: string) =>
  new AppError('plan_not_found', `Plan ${id} does not exist`, { details: [{ path, message: 'no such plan' }] });

/** A plan a body names: 400 plan_not_found when unknown (D-2). */
export async function requirePlan(db: Db, id: string, path: string): Promise<PlanRow> {
  const plan = await findPlanRow(db, id);
  if (!plan) throw planNotFound(id, path);
  return plan;
}

/**
 * The usability rule for a plan a new subscription or a plan change names (once): it exists (400 plan_not_found)
 * and is active (400 plan_inactive). `path` is the body's field that names it.
 */
export async function requireUsablePlan(db: Db, id: string, path: string): Promise<PlanRow> {
  const plan = await requirePlan(db, id, path);
  if (!plan.active)
    throw new AppError('plan_inactive', `Plan ${plan.id} is inactive`, { details: [{ path, message: 'is inactive' }] });
  return plan;
}

/** The plan of this id; undefined when there is none. */
export function findPlan(db: Db, id: string): Promise<PlanRow | undefined> {
  return findPlanRow(db, id);
}

/** Many plans by id in one query (a renewal batch's). */
export function findPlans(db: Db, ids: string[]): Promise<Map<string, PlanRow>> {
  return findPlanRows(db, ids);
}

/** Each product's plans, oldest first, in one query. */
export async function plansOfProducts(db: Db, productIds: string[]): Promise<Map<string, PlanRow[]>> {
  const byProduct = new Map<string, PlanRow[]>(productIds.map((id) => [id, []]));
  for (const plan of await listPlanRowsOfProducts(db, productIds)) byProduct.get(plan.product_id)?.push(plan);
  return byProduct;
}
