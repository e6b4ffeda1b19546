/**
 * Charges on plans (U-3, U-4): validated against their model and the plan's pricing model, stored with the plan in
 * its transaction, read back with their metrics. A plan's charges never change (D-40: a new price is a new plan).
 */
import type { Db } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import { assertCurrencyPrecision } from '../money-input.ts';
import { money } from '../money.ts';
import type { ChargeTerms } from '../pricing/usage.ts';
import type { ChargeInput } from './charge-schema.ts';
import {
  findChargesById,
  findMetricRows,
  insertChargeRows,
  listChargesOfPlans,
  type ChargeInsert,
  type ChargeWithMetric,
} from './repo.ts';

export type { ChargeWithMetric };

const refuse = (path: string, message: string) =>
  new AppError('invalid_request', `charges: ${path} ${message}`, { details: [{ path, message }] });

/** The fields each model takes; any other is refused, so nothing sent is silently ignored. */
const MODEL_FIELDS: Record<ChargeInput['model'], { required: (keyof ChargeInput)[]; allowed: (keyof ChargeInput)[] }> =
  {
    per_unit: { required: ['unitPrice'], allowed: ['unitPrice', 'freeUnits'] },
    package: { required: ['packageSize', 'packagePrice'], allowed: ['packageSize', 'packagePrice', 'freeUnits'] },
    graduated: { required: ['tiers'], allowed: ['tiers'] },
    volume: { required: ['tiers'], allowed: ['tiers'] },
  };
const TERMS: (keyof ChargeInput)[] = ['unitPrice', 'freeUnits', 'packageSize', 'packagePrice', 'tiers'];

/** U-4: tiers ascending by upTo, the last open (null) and only the last. */
function assertTiers(charge: ChargeInput, at: string, currency: string): void {
  const tiers = charge.tiers ?? [];
  tiers.forEach((tier, i) => {
    const last = i === tiers.length - 1;
    if (last !== (tier.upTo === null))
      throw refuse(`${at}.tiers`, 'must be ascending by upTo with only the last tier open (upTo null)');
    const previous = tiers[i - 1]?.upTo;
    if (tier.upTo !== null && previous != null && !money(tier.upTo).gt(previous))
      throw refuse(`${at}.tiers`, 'must be ascending by upTo with only the last tier open (upTo null)');
    if (tier.upTo !== null && money(tier.upTo).isZero()) throw refuse(`${at}.tiers`, 'upTo must be above 0');
    if (tier.flatFee !== undefined) assertCurrencyPrecision(tier.flatFee, currency, `${at}.tiers.${i}.flatFee`);
  });
}

/** Checks one charge's terms against its model (400 naming the field). */
function assertChargeTerms(charge: ChargeInput, at: string, currency: string): void {
  const { required, allowed } = MODEL_FIELDS[charge.model];
  for (const field of required)
    if (charge[field] === undefined) throw refuse(`${at}.${field}`, `is required for model ${charge.model}`);
  for (const field of TERMS)
    if (charge[field] !== undefined && !allowed.includes(field))
      throw refuse(`${at}.${field}`, `is not used by model ${charge.model}`);
  if (charge.packagePrice !== undefined) assertCurrencyPrecision(charge.packagePrice, currency, `${at}.packagePrice`);
  assertTiers(charge, at, currency);
}

export type PricingModel = 'flat' | 'usage' | 'hybrid';

/**
 * U-3: a flat plan has no charges, a usage or hybrid plan at least one; one charge per metric; every metric exists;
 * each charge's terms fit its model. Reads the metrics; writes nothing.
 */
export async function assertCharges(
  db: Db,
  pricingModel: PricingModel,
  charges: ChargeInput[],
  currency: string,
): Promise<void> {
  if (pricingModel === 'flat' && charges.length > 0) throw refuse('charges', 'must be empty for pricingModel flat');
  if (pricingModel !== 'flat' && charges.length === 0)
    throw refuse('charges', `must hold at least one charge for pricingModel ${pricingModel}`);
  const seen = new Set<string>();
  charges.forEach((charge, i) => {
    if (seen.has(charge.metricId)) throw refuse(`charges.${i}.metricId`, 'is charged twice on this plan');
    seen.add(charge.metricId);
    assertChargeTerms(charge, `charges.${i}`, currency);
  });
  const known = new Set((await findMetricRows(db, [...seen])).map((m) => m.id));
  const unknown = charges.findIndex((c) => !known.has(c.metricId));
  if (unknown >= 0) throw refuse(`charges.${unknown}.metricId`, 'names no metric');
}

/** Stores a new plan's charges (after assertCharges), in the order given. */
export async function insertCharges(trx: Db, planId: string, charges: ChargeInput[]): Promise<ChargeWithMetric[]> {
  const rows: ChargeInsert[] = charges.map((c, i) => ({
    plan_id: planId,
    metric_id: c.metricId,
    position: i + 1,
    model: c.model,
    unit_price: c.unitPrice ?? null,
    free_units: c.freeUnits ?? null,
    package_size: c.packageSize ?? null,
    package_price: c.packagePrice ?? null,
    tiers: c.tiers?.map((t) => ({ upTo: t.upTo, unitPrice: t.unitPrice, flatFee: t.flatFee ?? null })) ?? null,
  }));
  if (rows.length === 0) return [];
  await insertChargeRows(trx, rows);
  return chargesOfPlan(trx, planId);
}

/** Each plan's charges with their metrics, in one query. */
export async function chargesOfPlans(db: Db, planIds: string[]): Promise<Map<string, ChargeWithMetric[]>> {
  const byPlan = new Map<string, ChargeWithMetric[]>(planIds.map((id) => [id, []]));
  for (const charge of await listChargesOfPlans(db, planIds)) byPlan.get(charge.plan_id)?.push(charge);
  return byPlan;
}

/**
 * Plans' charges never change (D-40: a new price is a new plan), nor does a metric's aggregation or field while a
 * charge uses it (U-2): so the ingestion path, which reads them for every batch, keeps them per process. The bench
 * (bench/usage.ts) showed each saved round trip in ingestion's throughput. Bounded: cleared when full.
 */
const chargeCache = new Map<string, ChargeWithMetric[]>();
const CHARGE_CACHE_PLANS = 10_000;

export async function cachedChargesOfPlans(db: Db, planIds: string[]): Promise<Map<string, ChargeWithMetric[]>> {
  const missing = planIds.filter((id) => !chargeCache.has(id));
  if (missing.length > 0) {
    if (chargeCache.size + missing.length > CHARGE_CACHE_PLANS) chargeCache.clear();
    for (const [id, charges] of await chargesOfPlans(db, missing)) chargeCache.set(id, charges);
  }
  return new Map(planIds.map((id) => [id, chargeCache.get(id) ?? []]));
}

export async function chargesOfPlan(db: Db, planId: string): Promise<ChargeWithMetric[]> {
  return (await chargesOfPlans(db, [planId])).get(planId)!;
}

/** Charges by id, whatever their plan (usage billed under a plan the subscription has left). */
export async function chargesById(db: Db, ids: string[]): Promise<Map<string, ChargeWithMetric>> {
  return new Map((await findChargesById(db, ids)).map((c) => [c.id, c]));
}

/** A stored charge's terms, as the pricing module takes them. */
export const chargeTerms = (c: ChargeWithMetric): ChargeTerms => ({
  model: c.model,
  unitPrice: c.unit_price,
  freeUnits: c.free_units,
  packageSize: c.package_size,
  packagePrice: c.package_price,
  tiers: c.tiers,
});
