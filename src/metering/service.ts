/**
 * Billable metrics (U-1, U-2): what a plan's charge measures. A metric a charge uses keeps its aggregation and field
 * and cannot be deleted; its name and description may change.
 */
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import type { PageQuery } from '../db/paginate.ts';
import { AppError, notFound } from '../errors.ts';
import {
  CHARGE_METRIC_FK,
  deleteMetricRow,
  findMetricRow,
  findMetricRowsByCode,
  insertMetricRow,
  listMetricRows,
  lockMetricRow,
  metricHasCharges,
  METRIC_CODE_KEY,
  updateMetricRow,
  type MetricRow,
} from './repo.ts';
import type { Aggregation, CreateMetricInput, UpdateMetricInput } from './schema.ts';

export type { MetricRow };

function audited(row: MetricRow): Record<string, unknown> {
  const { code, name, description, aggregation, field } = row;
  return { code, name, description, aggregation, field };
}

/** U-1: `field` is required for every aggregation but count, and refused for count. */
function assertFieldFits(aggregation: Aggregation, field: string | null | undefined): void {
  if (aggregation === 'count' && field)
    throw new AppError('invalid_request', 'A count metric reads no field', {
      details: [{ path: 'field', message: 'must be absent for aggregation count' }],
    });
  if (aggregation !== 'count' && !field)
    throw new AppError('invalid_request', `A ${aggregation} metric reads a field`, {
      details: [{ path: 'field', message: `is required for aggregation ${aggregation}` }],
    });
}

const inUse = (row: MetricRow, what: string) =>
  new AppError('metric_in_use', `Metric ${row.code} is used by a plan's charge: ${what}`);

export function createMetric(db: Db, input: CreateMetricInput, actor: Actor): Promise<MetricRow> {
  assertFieldFits(input.aggregation, input.field);
  return inTransaction(db, async (trx) => {
    let created: MetricRow;
    try {
      created = await insertMetricRow(trx, {
        code: input.code,
        name: input.name,
        description: input.description ?? null,
        aggregation: input.aggregation,
        field: input.field ?? null,
      });
    } catch (error) {
      if (!isUniqueViolation(error, METRIC_CODE_KEY)) throw error;
      throw new AppError('metric_code_taken', `A metric with code ${input.code} exists`, {
        details: [{ path: 'code', message: 'is taken' }],
      });
    }
    await recordAudits(trx, actor, [
      { action: 'metric.create', targetType: 'metric', targetId: created.id, after: audited(created) },
    ]);
    return created;
  });
}

export function listMetrics(db: Db, page: PageQuery) {
  return listMetricRows(db, page);
}

export async function getMetric(db: Db, id: string): Promise<MetricRow> {
  const row = await findMetricRow(db, id);
  if (!row) throw notFound('Metric');
  return row;
}

/**
 * Metrics by code as ingestion reads them for every batch, kept per process for a few seconds: a metric that a charge
 * uses (the only kind an event can bill) keeps its code, aggregation and field (U-2); a new code is read at once.
 */
const METRIC_CACHE_MS = 5_000;
const metricCache = new Map<string, { metric: MetricRow; until: number }>();

export async function cachedMetricsByCode(db: Db, codes: string[]): Promise<Map<string, MetricRow>> {
  const now = Date.now();
  const missing = [...new Set(codes)].filter((c) => (metricCache.get(c)?.until ?? 0) < now);
  if (missing.length > 0) {
    if (metricCache.size > 10_000) metricCache.clear();
    for (const [code, metric] of await metricsByCode(db, missing))
      metricCache.set(code, { metric, until: now + METRIC_CACHE_MS });
  }
  return new Map(codes.flatMap((c) => (metricCache.has(c) ? [[c, metricCache.get(c)!.metric] as const] : [])));
}

/** Metrics by code (an ingestion batch's). */
export async function metricsByCode(db: Db, codes: string[]): Promise<Map<string, MetricRow>> {
  return new Map((await findMetricRowsByCode(db, codes)).map((m) => [m.code, m]));
}

export function updateMetric(db: Db, id: string, changes: UpdateMetricInput, actor: Actor): Promise<MetricRow> {
  return inTransaction(db, async (trx) => {
    const before = await lockMetricRow(trx, id);
    if (!before) throw notFound('Metric');
    const aggregation = changes.aggregation ?? before.aggregation;
    const field = changes.field === undefined ? before.field : changes.field;
    const measures = aggregation !== before.aggregation || field !== before.field;
    if (measures) {
      assertFieldFits(aggregation, field);
      if (await metricHasCharges(trx, id)) throw inUse(before, 'its aggregation and field cannot change');
    }
    const after = await updateMetricRow(trx, id, {
      ...(changes.name === undefined ? {} : { name: changes.name }),
      ...(changes.description === undefined ? {} : { description: changes.description }),
      ...(measures ? { aggregation, field } : {}),
    });
    await recordAudits(trx, actor, [
      { action: 'metric.update', targetType: 'metric', targetId: id, before: audited(before), after: audited(after) },
    ]);
    return after;
  });
}

export function deleteMetric(db: Db, id: string, actor: Actor): Promise<void> {
  return inTransaction(db, async (trx) => {
    const before = await lockMetricRow(trx, id);
    if (!before) throw notFound('Metric');
    if (await metricHasCharges(trx, id)) throw inUse(before, 'it cannot be deleted');
    try {
      await deleteMetricRow(trx, id);
    } catch (error) {
      // A plan created concurrently with a charge on it (the foreign key is the backstop).
      if (isForeignKeyViolation(error, CHARGE_METRIC_FK)) throw inUse(before, 'it cannot be deleted');
      throw error;
    }
    await recordAudits(trx, actor, [
      { action: 'metric.delete', targetType: 'metric', targetId: id, before: audited(before) },
    ]);
  });
}
