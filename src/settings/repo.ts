import type { Db } from '../db/knex.ts';

export async function selectSettingRows(
  db: Db,
  keys?: string[],
  options: { lock?: boolean } = {},
): Promise<Map<string, unknown>> {
  const query = db('settings').select('key', 'value');
  if (keys) query.whereIn('key', keys);
  if (options.lock) query.forUpdate();
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
