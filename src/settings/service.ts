import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError, type ErrorDetail } from '../http/errors.ts';
import { issuesToDetails } from '../http/validate.ts';
import { isSettingKey, SECRET_MASK, settingDef, settingDefinitions, type SettingKey, type SettingValue } from './definitions.ts';
import { selectSettingRows, upsertSettingRows } from './repo.ts';

function resolve(key: SettingKey, stored: unknown, env: NodeJS.ProcessEnv): unknown {
  const def = settingDef(key);
  const fromEnv = def.env ? env[def.env] : undefined;
  if (fromEnv !== undefined && fromEnv !== '') {
    const parsed = def.schema.safeParse(fromEnv);
    if (!parsed.success) throw new Error(`Invalid ${def.env}: ${parsed.error.issues[0]?.message}`);
    return parsed.data;
  }
  if (stored === undefined) return def.default;
  const parsed = def.schema.safeParse(stored);
  return parsed.success ? parsed.data : def.default;
}

/** One setting's effective value: environment override, else the stored row, else the default (D-12). */
export async function getSetting<K extends SettingKey>(db: Db, key: K, env = process.env): Promise<SettingValue<K>> {
  const rows = await selectSettingRows(db, [key]);
  return resolve(key, rows.get(key), env) as SettingValue<K>;
}

/** Several settings in one query. */
export async function getSettings<K extends SettingKey>(db: Db, keys: K[], env = process.env): Promise<{ [P in K]: SettingValue<P> }> {
  const rows = await selectSettingRows(db, keys);
  return Object.fromEntries(keys.map((k) => [k, resolve(k, rows.get(k), env)])) as { [P in K]: SettingValue<P> };
}

/** Every setting for the admin API, secrets masked. */
export async function listSettings(db: Db, env = process.env): Promise<Record<string, unknown>> {
  const rows = await selectSettingRows(db);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(settingDefinitions) as SettingKey[]) {
    const value = resolve(key, rows.get(key), env);
    out[key] = settingDef(key).secret && value !== '' ? SECRET_MASK : value;
  }
  return out;
}

/** Validates every given key and value, then stores them together; nothing is stored when one is bad. */
export async function updateSettings(db: Db, values: Record<string, unknown>, env = process.env): Promise<Record<string, unknown>> {
  const details: ErrorDetail[] = [];
  const valid: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (!isSettingKey(key)) {
      details.push({ path: key, message: 'unknown setting' });
      continue;
    }
    const def = settingDef(key);
    // Writing the mask back (a form round-trip) leaves a secret as it was.
    if (def.secret && value === SECRET_MASK) continue;
    const parsed = def.schema.safeParse(value);
    if (!parsed.success) details.push(...issuesToDetails(parsed.error, key));
    else valid[key] = parsed.data;
  }
  if (details.length > 0) {
    const unknownOnly = details.every((d) => d.message === 'unknown setting');
    throw new AppError(unknownOnly ? 'unknown_setting' : 'invalid_request', `Invalid settings: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`, { details });
  }
  await inTransaction(db, (trx) => upsertSettingRows(trx, valid));
  return listSettings(db, env);
}
