import type { Db } from '../db/knex.ts';
import { textLiteral } from '../db/literal.ts';

export async function selectSettingRows(db: Db, keys?: string[]): Promise<Map<string, unknown>> {
  const query = db('settings').select('key', 'value');
  if (keys) query.whereIn('key', keys);
  const rows = (await query) as { key: string; value: unknown }[];
  return new Map(rows.map((r) => [r.key, r.value]));
}

export async function upsertSettingRows(db: Db, values: Record<string, unknown>): Promise<void> {
  const rows = Object.entries(values).map(([key, value]) => ({
    key,
    value: JSON.stringify(value),
    updated_at: db.fn.now(),
  }));
  if (rows.length === 0) return;
  await db('settings').insert(rows).onConflict('key').merge(['value', 'updated_at']);
}

/**
 * selectSettingRows of `keys` as an SQL expression for another statement: the stored values as one jsonb object, key ->
 * value.
 */
export function storedSettingsSql(keys: string[]): string {
  return (
    `(select coalesce(jsonb_object_agg(key, value), '{}'::jsonb) from settings where key in ` +
    `(${keys.map(textLiteral).join(', ')}))`
  );
}
