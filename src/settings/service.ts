import type { Actor } from '../actor.ts';
import { REDACTED } from '../audit/changes.ts';
import { recordAudits } from '../audit/service.ts';
import type { Config } from '../config.ts';
import {
  isSealed,
  keyringOf,
  openSecret,
  plaintextToReseal,
  sealSecret,
  tryOpenSecret,
  type Keyring,
  type SealContext,
} from '../crypto/envelope.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError, type ErrorDetail } from '../errors.ts';
import { issuesToDetails } from '../http/validate.ts';
import {
  isSettingKey,
  SECRET_MASK,
  settingDef,
  settingDefinitions,
  type SettingEnvVar,
  type SettingKey,
  type SettingValue,
} from './definitions.ts';
import { selectSettingRows, upsertSettingRows } from './repo.ts';

/**
 * What of the configuration settings reads take, as config.ts parsed it: the environment overrides of settings
 * (D-12), and the keys that open secret settings (ENCRYPTION_KEY, issue 33). Callers pass `deps.config`, so a test
 * app's own environment counts. A variable left out overrides nothing.
 */
export type SettingOverrides = Partial<Pick<Config, SettingEnvVar | 'ENCRYPTION_KEY' | 'LICENSE_SIGNING_SECRET'>>;

/** The settings stored sealed (`secret: true`). */
type SecretSettingKey = {
  [K in SettingKey]: (typeof settingDefinitions)[K] extends { secret: true } ? K : never;
}[SettingKey];

/**
 * A read of a setting that an environment variable overrides must be given the overrides (forgetting
 * them would silently ignore the variable), and so must a read of a secret setting (its keys open it); a read
 * of other settings need not, so code without the config at hand (dunning) can still read those.
 */
export type OverridesFor<K extends SettingKey> = [SettingEnvVar<K> | Extract<K, SecretSettingKey>] extends [never]
  ? [overrides?: SettingOverrides]
  : [overrides: SettingOverrides];

/** How the envelope knows a secret setting: by its key. */
const secretContext = (key: SettingKey): SealContext => ({ aad: `settings:${key}`, label: `setting ${key}` });

/** An environment value is text; a setting may be a number or a list, so JSON is tried after the raw text. */
function parseOverride(key: SettingKey, raw: string): unknown {
  const def = settingDef(key);
  const asText = def.schema.safeParse(raw);
  if (asText.success) return asText.data;
  let asJson: unknown;
  try {
    asJson = JSON.parse(raw);
  } catch {
    asJson = undefined;
  }
  const parsed = def.schema.safeParse(asJson);
  if (parsed.success) return parsed.data;
  const issue = (asJson === undefined ? asText.error : parsed.error).issues[0];
  throw new Error(`Invalid ${def.env}: ${issue?.message}`);
}

function resolve(key: SettingKey, stored: unknown, overrides: Partial<Config> | undefined): unknown {
  const def = settingDef(key);
  const fromEnv = def.env ? overrides?.[def.env] : undefined;
  if (typeof fromEnv === 'string' && fromEnv !== '') return parseOverride(key, fromEnv);
  if (stored === undefined) return def.default;
  // A sealed secret is longer than its plaintext's limit; it was checked before it was sealed.
  if (def.secret && typeof stored === 'string' && isSealed(stored)) return stored;
  const parsed = def.schema.safeParse(stored);
  return parsed.success ? parsed.data : def.default;
}

/** Throws naming the variable when an environment override is invalid; call at start-up (D-9). */
export function assertSettingOverridesValid(overrides: SettingOverrides): void {
  for (const key of Object.keys(settingDefinitions) as SettingKey[]) resolve(key, undefined, overrides);
}

/** One setting's effective value: environment override, else the stored row, else the default (D-12). */
export async function getSetting<K extends SettingKey>(
  db: Db,
  key: K,
  ...[overrides]: OverridesFor<K>
): Promise<SettingValue<K>> {
  return (await getSettings(db, [key], ...([overrides] as OverridesFor<K>)))[key];
}

/** A secret setting's plaintext (issue 33); throws SealedSecretError, naming ENCRYPTION_KEY, when it cannot. */
function opened(key: SettingKey, value: unknown, overrides: SettingOverrides | undefined): Promise<unknown> | unknown {
  if (!settingDef(key).secret || typeof value !== 'string') return value;
  return openSecret(keyringOf(overrides ?? {}), value, secretContext(key));
}

/** Several settings in one query. */
export async function getSettings<K extends SettingKey>(
  db: Db,
  keys: K[],
  ...[overrides]: OverridesFor<K>
): Promise<{ [P in K]: SettingValue<P> }> {
  const rows = await selectSettingRows(db, keys);
  const values = await Promise.all(keys.map((k) => opened(k, resolve(k, rows.get(k), overrides), overrides)));
  return Object.fromEntries(keys.map((k, i) => [k, values[i]])) as { [P in K]: SettingValue<P> };
}

/** Every setting for the admin API, secrets masked. */
export async function listSettings(db: Db, overrides: SettingOverrides): Promise<Record<string, unknown>> {
  const rows = await selectSettingRows(db);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(settingDefinitions) as SettingKey[]) {
    const value = resolve(key, rows.get(key), overrides);
    out[key] = settingDef(key).secret && value !== '' ? SECRET_MASK : value;
  }
  return out;
}

function validateChanges(values: Record<string, unknown>): {
  valid: Partial<Record<SettingKey, unknown>>;
  details: ErrorDetail[];
} {
  const details: ErrorDetail[] = [];
  const valid: Partial<Record<SettingKey, unknown>> = {};
  for (const [key, value] of Object.entries(values)) {
    if (!isSettingKey(key)) {
      details.push({ path: key, message: 'unknown setting' });
      continue;
    }
    const def = settingDef(key);
    // Writing the mask back (a form sent back as it was shown) leaves a secret as it was.
    if (def.secret && value === SECRET_MASK) continue;
    const parsed = def.schema.safeParse(value);
    if (!parsed.success) details.push(...issuesToDetails(parsed.error, key));
    else valid[key] = parsed.data;
  }
  return { valid, details };
}

/**
 * Switching login to the identity provider without its address would lock every admin out
 * (nobody could log in to undo it), so `auth.provider: idp` needs realm URL and client id in effect.
 */
async function idpProblems(
  db: Db,
  valid: Partial<Record<SettingKey, unknown>>,
  overrides: SettingOverrides,
): Promise<ErrorDetail[]> {
  const current = await getSettings(db, ['auth.provider', 'auth.idp.realm_url', 'auth.idp.client_id'], overrides);
  const after = { ...current, ...valid } as typeof current;
  if (after['auth.provider'] !== 'idp' || (after['auth.idp.realm_url'] && after['auth.idp.client_id'])) return [];
  return [{ path: 'auth.provider', message: 'idp needs auth.idp.realm_url and auth.idp.client_id to be set' }];
}

/**
 * The audit entry of a settings change (C-11): one per request, on the keys whose stored value changed
 * (the target id names them), before and after keyed by setting name. The values sit under `settings`
 * so the audit log keeps the keys as the API spells them; a secret setting is recorded as changed, never its value.
 */
function settingsAudit(before: Map<string, unknown>, valid: Partial<Record<SettingKey, unknown>>) {
  const changed = (Object.keys(valid) as SettingKey[])
    .filter((key) => JSON.stringify(resolve(key, before.get(key), undefined)) !== JSON.stringify(valid[key]))
    .sort();
  const side = (value: (key: SettingKey) => unknown) => ({
    settings: Object.fromEntries(changed.map((key) => [key, settingDef(key).secret ? REDACTED : value(key)])),
  });
  return {
    action: 'setting.update',
    targetType: 'setting',
    targetId: changed.length > 0 ? changed.join(',') : 'settings',
    before: side((key) => resolve(key, before.get(key), undefined)),
    after: side((key) => valid[key]),
  };
}

/**
 * The values to store: secret ones sealed (issue 33). `before` (the stored rows) gets the plaintext of the secrets
 * it holds, where the keys open them, so the audit sees whether a secret changed rather than its envelope.
 */
async function sealedSecrets(
  before: Map<string, unknown>,
  valid: Partial<Record<SettingKey, unknown>>,
  keyring: Keyring,
): Promise<Partial<Record<SettingKey, unknown>>> {
  const stored = { ...valid };
  for (const key of Object.keys(valid) as SettingKey[]) {
    if (!settingDef(key).secret || typeof valid[key] !== 'string') continue;
    stored[key] = await sealSecret(keyring, valid[key], secretContext(key));
    const was = before.get(key);
    if (typeof was !== 'string') continue;
    const open = await tryOpenSecret(keyring, was, secretContext(key));
    if ('plaintext' in open) before.set(key, open.plaintext);
  }
  return stored;
}

/**
 * The release step: every secret setting stored as `updateSettings` would store it now (sealed with the first
 * key). Throws SealedSecretError (naming ENCRYPTION_KEY) when one cannot be opened. Returns the keys it sealed.
 */
export async function sealSecretSettings(db: Db, keyring: Keyring): Promise<SettingKey[]> {
  const keys = (Object.keys(settingDefinitions) as SettingKey[]).filter((key) => settingDef(key).secret);
  return inTransaction(db, async (trx) => {
    const sealed: SettingKey[] = [];
    for (const [key, value] of await selectSettingRows(trx, keys, { lock: true })) {
      if (typeof value !== 'string' || !isSettingKey(key)) continue;
      const plaintext = await plaintextToReseal(keyring, value, secretContext(key));
      if (plaintext === undefined) continue;
      await upsertSettingRows(trx, { [key]: await sealSecret(keyring, plaintext, secretContext(key)) });
      sealed.push(key);
    }
    return sealed;
  });
}

/**
 * Validates every given key and value, then stores them together with their audit row; nothing is stored
 * (and nothing audited) when one is bad.
 */
export async function updateSettings(
  db: Db,
  values: Record<string, unknown>,
  overrides: SettingOverrides,
  actor: Actor,
): Promise<Record<string, unknown>> {
  const { valid, details } = validateChanges(values);
  if (details.length > 0) {
    const unknownOnly = details.every((d) => d.message === 'unknown setting');
    throw new AppError(
      unknownOnly ? 'unknown_setting' : 'invalid_request',
      `Some settings need correcting: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`,
      { details },
    );
  }
  await inTransaction(db, async (trx) => {
    const problems = await idpProblems(trx, valid, overrides);
    if (problems.length > 0)
      throw new AppError('invalid_request', `Some settings need correcting: ${problems[0]!.message}`, {
        details: problems,
      });
    const before = await selectSettingRows(trx, Object.keys(valid));
    await upsertSettingRows(trx, await sealedSecrets(before, valid, keyringOf(overrides)));
    await recordAudits(trx, actor, [settingsAudit(before, valid)]);
  });
  return listSettings(db, overrides);
}

/** What kind of value a setting takes, by its default's. */
function settingKind(value: unknown): SettingDescription['kind'] {
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  return Array.isArray(value) ? 'numbers' : 'text';
}

/** A setting as the console lists it: its value as the API reads it, what it means, and what kind of value it takes. */
export interface SettingDescription {
  key: SettingKey;
  value: unknown;
  description: string;
  secret: boolean;
  /** `number`, a list of numbers, or text: how a form's text becomes the value the API takes. */
  kind: 'number' | 'numbers' | 'boolean' | 'text';
  /** The environment variable that overrides the stored value, when it is set (D-12). */
  overriddenBy: string | null;
}

export async function describeSettings(db: Db, overrides: SettingOverrides): Promise<SettingDescription[]> {
  const values = await listSettings(db, overrides);
  return (Object.keys(settingDefinitions) as SettingKey[]).map((key) => {
    const def = settingDef(key);
    const fromEnv = def.env ? (overrides as Partial<Config>)[def.env] : undefined;
    return {
      key,
      value: values[key],
      description: def.description,
      secret: Boolean(def.secret),
      kind: settingKind(def.default),
      overriddenBy: typeof fromEnv === 'string' && fromEnv !== '' ? def.env! : null,
    };
  });
}
