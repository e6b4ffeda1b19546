/**
 * The changed fields of an audited object, before and after (C-11). Keys are shown as the API names them
 * (camelCase); secrets are never stored: a secret field that changed is recorded as `[redacted]` on both
 * sides, so the log says it changed without keeping either value.
 */

export type Fields = Record<string, unknown>;

export const REDACTED = '[redacted]';

// Field names that hold a secret or a credential, whatever the domain calls them.
const SECRET_FIELD = /secret|password|token|hash|private|^key$|apikey|signingkey|credential/i;

// A sweep batch audits hundreds of rows with the same few keys: each key's API name and secrecy is worked out once.
const camelNames = new Map<string, string>();
const camel = (key: string) => {
  let name = camelNames.get(key);
  if (name === undefined) {
    name = key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
    if (camelNames.size < 10_000) camelNames.set(key, name);
  }
  return name;
};
const secretNames = new Map<string, boolean>();
const isSecret = (key: string) => {
  let secret = secretNames.get(key);
  if (secret === undefined) {
    secret = SECRET_FIELD.test(key);
    if (secretNames.size < 10_000) secretNames.set(key, secret);
  }
  return secret;
};

/** A JSON-safe copy of a value: dates as ISO strings, bigints and Decimals as strings. */
function plain(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object') {
    if (typeof (value as { toFixed?: unknown }).toFixed === 'function') return String(value);
    return Object.fromEntries(Object.entries(value as Fields).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

// The fields under their API names, in a Map: any name is a field like any other (`__proto__`, `constructor`), and a
// sweep batch's hundreds of entries stay cheap (a null-prototype object is a slow dictionary in V8).
function normalise(fields: Fields | null | undefined): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (!fields) return out;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (value !== undefined) out.set(camel(key), plain(value));
  }
  return out;
}

// Plain values are primitives, arrays or objects; only the latter two need serialising to compare.
const same = (a: unknown, b: unknown) =>
  a === b ||
  (typeof a === 'object' &&
    typeof b === 'object' &&
    a !== null &&
    b !== null &&
    JSON.stringify(a) === JSON.stringify(b));

/**
 * What changed from `before` to `after`: only the fields that differ, on each side. A create has no
 * `before` (null) and a delete no `after` (null); an update that changed nothing answers two empty objects.
 * `ignore` names fields that are bookkeeping, not a change (updatedAt...).
 */
export function changedFields(
  before: Fields | null | undefined,
  after: Fields | null | undefined,
  ignore: readonly string[] = ['updatedAt', 'createdAt'],
): { before: Fields | null; after: Fields | null } {
  const b = normalise(before);
  const a = normalise(after);
  const outBefore: Fields = {};
  const outAfter: Fields = {};
  const consider = (k: string, inB: boolean, inA: boolean) => {
    if (ignore.includes(k) || same(inB ? b.get(k) : null, inA ? a.get(k) : null)) return;
    const secret = isSecret(k);
    if (inB) outBefore[k] = secret ? REDACTED : b.get(k);
    if (inA) outAfter[k] = secret ? REDACTED : a.get(k);
  };
  for (const k of b.keys()) consider(k, true, a.has(k));
  for (const k of a.keys()) if (!b.has(k)) consider(k, false, true);
  return { before: before ? outBefore : null, after: after ? outAfter : null };
}
