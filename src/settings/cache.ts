import type { Db } from '../db/knex.ts';
import type { SettingKey, SettingValue } from './definitions.ts';
import { getSetting, type OverridesFor } from './service.ts';

const TTL_MS = 5_000;
// Per database handle, so processes (and tests) with several databases never mix their settings.
const caches = new WeakMap<object, Map<SettingKey, { value: unknown; until: number }>>();

/**
 * A setting read for hot paths (public license checks): at most one query per key every 5 s per
 * process, so a changed setting takes effect within 5 s.
 */
export async function getSettingCached<K extends SettingKey>(
  db: Db,
  key: K,
  ...overrides: OverridesFor<K>
): Promise<SettingValue<K>> {
  const fresh = freshCachedSetting(db, key);
  if (fresh !== undefined) return fresh;
  const value = await getSetting(db, key, ...overrides);
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  cache.set(key, { value, until: Date.now() + TTL_MS });
  return value;
}

/**
 * The value getSettingCached would answer from its cache now, or undefined when it would query: lets a hot path
 * (the public license limit) go on without a promise while the value is fresh (issue 20, read paths).
 */
export function freshCachedSetting<K extends SettingKey>(db: Db, key: K): SettingValue<K> | undefined {
  const hit = caches.get(db)?.get(key);
  return hit && hit.until > Date.now() ? (hit.value as SettingValue<K>) : undefined;
}
