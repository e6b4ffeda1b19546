import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';
import type { ChargeModel, Tier } from '../pricing/usage.ts';
import type { Aggregation } from './aggregations.ts';

export interface MetricRow {
  id: string;
  code: string;
  name: string;
  description: string | null;
  aggregation: Aggregation;
  field: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ChargeRow {
  id: string;
  plan_id: string;
  metric_id: string;
  position: number;
  model: ChargeModel;
  unit_price: string | null;
  free_units: string | null;
  package_size: number | null;
  package_price: string | null;
  tiers: Tier[] | null;
  created_at: Date;
}

/** A charge with the metric it prices. */
export interface ChargeWithMetric extends ChargeRow {
  metric: MetricRow;
}

export const METRIC_CODE_KEY = 'billable_metrics_code_key';
export const CHARGE_METRIC_FK = 'plan_charges_metric_id_fkey';

export async function insertMetricRow(
  db: Db,
  row: Pick<MetricRow, 'code' | 'name' | 'description' | 'aggregation' | 'field'>,
): Promise<MetricRow> {
  const [created] = await db('billable_metrics').insert(row).returning('*');
  return created as MetricRow;
}

export function findMetricRow(db: Db, id: string): Promise<MetricRow | undefined> {
  return db('billable_metrics').where({ id }).first();
}

export function lockMetricRow(db: Db, id: string): Promise<MetricRow | undefined> {
  return db('billable_metrics').where({ id }).forUpdate().first();
}

export async function findMetricRows(db: Db, ids: string[]): Promise<MetricRow[]> {
  if (ids.length === 0) return [];
  return db('billable_metrics').whereIn('id', [...new Set(ids)]);
}

export async function findMetricRowsByCode(db: Db, codes: string[]): Promise<MetricRow[]> {
  if (codes.length === 0) return [];
  return db('billable_metrics').whereIn('code', [...new Set(codes)]);
}

export function listMetricRows(db: Db, page: PageQuery): Promise<Page<MetricRow>> {
  return paginate<MetricRow>(db('billable_metrics').select('*'), 'billable_metrics', page);
}

export async function updateMetricRow(
  db: Db,
  id: string,
  changes: Partial<Pick<MetricRow, 'name' | 'description' | 'aggregation' | 'field'>>,
): Promise<MetricRow> {
  const [row] = await db('billable_metrics')
    .where({ id })
    .update({ ...changes, updated_at: db.fn.now() })
    .returning('*');
  return row as MetricRow;
}

export async function deleteMetricRow(db: Db, id: string): Promise<void> {
  await db('billable_metrics').where({ id }).delete();
}

/** Whether any plan's charge uses the metric. */
export async function metricHasCharges(db: Db, metricId: string): Promise<boolean> {
  return (await db('plan_charges').where({ metric_id: metricId }).first('id')) !== undefined;
}

export type ChargeInsert = Omit<ChargeRow, 'id' | 'created_at'>;

export async function insertChargeRows(db: Db, rows: ChargeInsert[]): Promise<ChargeRow[]> {
  if (rows.length === 0) return [];
  const inserted = await db('plan_charges')
    .insert(rows.map((r) => ({ ...r, tiers: r.tiers === null ? null : JSON.stringify(r.tiers) })))
    .returning('*');
  return (inserted as ChargeRow[]).sort((a, b) => a.position - b.position);
}

type JoinedCharge = ChargeRow & { metric: MetricRow & { created_at: string; updated_at: string } };

/** Charges joined with their metrics, `where` narrowing them; row_to_json gives the metric's dates as text. */
async function chargesWithMetrics(db: Db, where: (q: ReturnType<Db>) => void): Promise<ChargeWithMetric[]> {
  const query = db('plan_charges as c')
    .join('billable_metrics as m', 'm.id', 'c.metric_id')
    .orderBy([{ column: 'c.plan_id' }, { column: 'c.position' }])
    .select('c.*', db.raw('row_to_json(m.*) as metric'));
  where(query);
  const rows = (await query) as JoinedCharge[];
  return rows.map((r) => ({
    ...r,
    metric: { ...r.metric, created_at: new Date(r.metric.created_at), updated_at: new Date(r.metric.updated_at) },
  }));
}

/** The charges of these plans with their metrics, each plan's in position order, in one query. */
export async function listChargesOfPlans(db: Db, planIds: string[]): Promise<ChargeWithMetric[]> {
  if (planIds.length === 0) return [];
  return chargesWithMetrics(db, (q) => q.whereIn('c.plan_id', [...new Set(planIds)]));
}

/** Charges by id with their metrics (an aggregate's or a billing's charges, whatever their plan). */
export async function findChargesById(db: Db, ids: string[]): Promise<ChargeWithMetric[]> {
  if (ids.length === 0) return [];
  return chargesWithMetrics(db, (q) => q.whereIn('c.id', [...new Set(ids)]));
}
