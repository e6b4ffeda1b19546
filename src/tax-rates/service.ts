import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import type { PageQuery } from '../db/paginate.ts';
import { AppError, fieldsRefused, notFound } from '../errors.ts';
import { DECIMAL_PATTERN, money } from '../money.ts';
import {
  findTaxRateRow,
  findTaxRateRows,
  insertTaxRateRow,
  listTaxRateRows,
  lockTaxRateRow,
  updateTaxRateRow,
  type TaxRateRow,
} from './repo.ts';
import { type CreateTaxRateInput, UNCHANGEABLE, type UpdateTaxRateInput } from './schema.ts';

export type { TaxRateRow };

/** A rate's fields as the audit log records them. */
function audited(row: TaxRateRow): Record<string, unknown> {
  const { name, percentage, inclusive, country, description, active } = row;
  return { name, percentage, inclusive, country, description, active };
}

export function createTaxRate(db: Db, input: CreateTaxRateInput, actor: Actor): Promise<TaxRateRow> {
  return inTransaction(db, async (trx) => {
    const created = await insertTaxRateRow(trx, {
      name: input.name,
      percentage: input.percentage,
      inclusive: input.inclusive,
      country: input.country ?? null,
      description: input.description ?? null,
    });
    await recordAudits(trx, actor, [
      { action: 'tax_rate.create', targetType: 'tax_rate', targetId: created.id, after: audited(created) },
    ]);
    return created;
  });
}

export function listTaxRates(db: Db, page: PageQuery, filters: { active?: boolean } = {}) {
  return listTaxRateRows(db, page, filters);
}

export async function getTaxRate(db: Db, id: string): Promise<TaxRateRow> {
  const row = await findTaxRateRow(db, id);
  if (!row) throw notFound('Tax rate');
  return row;
}

/** Whether a PUT's `percentage` or `inclusive` is the rate's own (sent back unchanged). */
function sameTerm(row: TaxRateRow, field: 'percentage' | 'inclusive', value: unknown): boolean {
  if (field === 'inclusive') return value === row.inclusive;
  return typeof value === 'string' && DECIMAL_PATTERN.test(value) && money(value).eq(row.percentage);
}

/** T-1: renames, describes or archives a rate; its terms never change (a changed one is 400, an unchanged one ok). */
export function updateTaxRate(db: Db, id: string, changes: UpdateTaxRateInput, actor: Actor): Promise<TaxRateRow> {
  return inTransaction(db, async (trx) => {
    const before = await lockTaxRateRow(trx, id);
    if (!before) throw notFound('Tax rate');
    const changed = (['percentage', 'inclusive'] as const).filter(
      (field) => changes[field] !== undefined && !sameTerm(before, field, changes[field]),
    );
    if (changed.length > 0) throw fieldsRefused(changed.map((path) => ({ path, message: UNCHANGEABLE })));
    const { name, description, active } = changes;
    const after = await updateTaxRateRow(trx, id, { name, description, active });
    await recordAudits(trx, actor, [
      {
        action: 'tax_rate.update',
        targetType: 'tax_rate',
        targetId: id,
        before: audited(before),
        after: audited(after),
      },
    ]);
    return after;
  });
}

/** Every rate, oldest first (the console's choices on plan and customer forms; a company has a handful). */
export async function allTaxRates(db: Db): Promise<TaxRateRow[]> {
  return (await listTaxRateRows(db, { limit: 500 }, {})).rows;
}

/** Many rates by id in one query, whatever their state (issuing skips archived ones itself). */
export function findTaxRates(db: Db, ids: readonly string[]): Promise<Map<string, TaxRateRow>> {
  return findTaxRateRows(db, ids);
}

/**
 * T-2: the rates a plan, a customer or an admin invoice names must exist and be active, and a list may hold one
 * inclusive rate at most (two prices-include-tax rates on one line cannot both be inside its amount). Answers them
 * in the order given; refuses with a 400 naming `path` (e.g. `taxRateIds`, `lineItems.0.taxRateIds`).
 */
export async function requireUsableTaxRates(db: Db, ids: readonly string[], path: string): Promise<TaxRateRow[]> {
  if (ids.length === 0) return [];
  return checkUsableTaxRates(await findTaxRateRows(db, ids), ids, path);
}

/** requireUsableTaxRates's rule on rates already read (`found`: by id), for a caller that read them for more. */
export function checkUsableTaxRates(
  found: ReadonlyMap<string, TaxRateRow>,
  ids: readonly string[],
  path: string,
): TaxRateRow[] {
  const refuse = (code: 'tax_rate_not_found' | 'tax_rate_inactive' | 'invalid_request', message: string) =>
    new AppError(code, `${path}: ${message}`, { details: [{ path, message }] });
  const rows = ids.map((id) => {
    const row = found.get(id);
    if (!row) throw refuse('tax_rate_not_found', `tax rate ${id} does not exist`);
    if (!row.active) throw refuse('tax_rate_inactive', `tax rate ${id} (${row.name}) is archived`);
    return row;
  });
  if (rows.filter((r) => r.inclusive).length > 1)
    throw refuse('invalid_request', 'must name at most one inclusive tax rate');
  return rows;
}
