/**
 * The one envelope for secrets the service keeps in its database (issue 33): license signing keys' private
 * halves, webhook endpoint secrets (current and previous) and secret settings (the identity provider's client
 * secret). AES-256-GCM under a key scrypt derives from ENCRYPTION_KEY, the value's context (its column, or its
 * row when the row's id is known first) bound in as associated data, so an envelope copied elsewhere does not open.
 *
 * Rotation as the providers' secrets: a comma-separated list, the first seals and any opens; the release step
 * re-seals what an older key sealed (`plaintextToReseal`). LICENSE_SIGNING_SECRET, the older name, is read after it.
 *
 * `v2.<key id>.<iv>.<tag>.<ciphertext>` (base64url): the key is derived once per process (scrypt costs tens of
 * milliseconds; a webhook send opens two secrets), and the key id (a hash of the derived key) says which key
 * sealed it. `v1.<salt>.<iv>.<tag>.<ciphertext>` is issue 21's license key envelope (a key derived per value
 * with its own salt); it still opens, and the release step re-seals it as v2.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes, scrypt } from 'node:crypto';
import { promisify } from 'node:util';
import type { Config } from '../config.ts';

const scryptAsync = promisify(scrypt) as (secret: string, salt: Buffer | string, length: number) => Promise<Buffer>;

/** The variable the keys come from, named in every message. */
export const ENCRYPTION_KEY_VARIABLE = 'ENCRYPTION_KEY';

/** The keys, newest first: the first seals, any opens. Empty: values are stored as they are (development only). */
export interface Keyring {
  readonly secrets: readonly string[];
}

/** What a stored value is: `aad` binds it to its place, `label` names it in a message ("webhook endpoint secret"). */
export interface SealContext {
  aad: string;
  label: string;
}

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

/** ENCRYPTION_KEY's keys, then LICENSE_SIGNING_SECRET's (the older name: it still opens, and seals when alone). */
export function keyringOf(config: Partial<Pick<Config, 'ENCRYPTION_KEY' | 'LICENSE_SIGNING_SECRET'>>): Keyring {
  return { secrets: [...new Set([...list(config.ENCRYPTION_KEY), ...list(config.LICENSE_SIGNING_SECRET)])] };
}

const SALT = 'billing:encryption-key:v2';
const derived = new Map<string, Promise<{ key: Buffer; id: string }>>();

/** The AES key of one secret and its id, derived once per process. */
function derive(secret: string): Promise<{ key: Buffer; id: string }> {
  let found = derived.get(secret);
  if (!found) {
    found = scryptAsync(secret, SALT, 32).then((key) => ({
      key,
      id: createHash('sha256').update('key-id').update(key).digest('base64url').slice(0, 8),
    }));
    derived.set(secret, found);
  }
  return found;
}

const b64 = '[A-Za-z0-9_-]';
const V2 = new RegExp(`^v2\\.(${b64}{8})\\.(${b64}{16})\\.(${b64}{22})\\.(${b64}*)$`);
const V1 = new RegExp(`^v1\\.(${b64}{22})\\.(${b64}{16})\\.(${b64}{22})\\.(${b64}+)$`);

/** Whether a stored value is an envelope (else it is plaintext, stored before a key was set). */
export function isSealed(stored: string): boolean {
  return V2.test(stored) || V1.test(stored);
}

/** Why a value stored so cannot be used under this keyring (a sentence naming the variable), or undefined. */
export function keyringProblem(keyring: Keyring, sealed: boolean, label: string): string | undefined {
  if (!sealed && keyring.secrets.length > 0)
    return (
      `The ${label} is stored unencrypted while ${ENCRYPTION_KEY_VARIABLE} is set: ` +
      `run the release step, which encrypts it`
    );
  if (sealed && keyring.secrets.length === 0)
    return `The ${label} is encrypted: set ${ENCRYPTION_KEY_VARIABLE} to the key it was stored with`;
  return undefined;
}

/** A stored value that cannot be opened: a misconfiguration, answered 500 and logged with this sentence. */
export class SealedSecretError extends Error {}

/**
 * The value to store: its envelope under the first key, or the value itself when no key is set (production refuses
 * to start without one). An empty value stays empty: it means "not set".
 */
export async function sealSecret(keyring: Keyring, plaintext: string, context: SealContext): Promise<string> {
  const first = keyring.secrets[0];
  if (first === undefined || plaintext === '') return plaintext;
  const { key, id } = await derive(first);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context.aad));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v2', id, ...[iv, cipher.getAuthTag(), sealed].map((b) => b.toString('base64url'))].join('.');
}

function decrypt(key: Buffer, iv: string, tag: string, sealed: string, aad: string): string | undefined {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    // GCM's tag check failed: another key sealed it (or it was altered, or moved from another place).
    return undefined;
  }
}

/** The plaintext and the index of the key that opened it (-1: stored as plaintext), or why it cannot be opened. */
export async function tryOpenSecret(
  keyring: Keyring,
  stored: string,
  context: SealContext,
): Promise<{ plaintext: string; openedWith: number } | { problem: string }> {
  if (stored === '') return { plaintext: '', openedWith: -1 };
  const sealed = isSealed(stored);
  const problem = keyringProblem(keyring, sealed, context.label);
  if (problem) return { problem };
  if (!sealed) return { plaintext: stored, openedWith: -1 };
  const v2 = V2.exec(stored);
  const v1 = V1.exec(stored);
  for (const [index, secret] of keyring.secrets.entries()) {
    let plaintext: string | undefined;
    if (v2) {
      const { key, id } = await derive(secret);
      if (id === v2[1]) plaintext = decrypt(key, v2[2]!, v2[3]!, v2[4]!, context.aad);
    } else if (v1) {
      const key = await scryptAsync(secret, Buffer.from(v1[1]!, 'base64url'), 32);
      plaintext = decrypt(key, v1[2]!, v1[3]!, v1[4]!, context.aad);
    }
    if (plaintext !== undefined) return { plaintext, openedWith: index };
  }
  return {
    problem:
      `${ENCRYPTION_KEY_VARIABLE} does not decrypt the ${context.label}: set the key it was stored with ` +
      `(new and old comma-separated while changing it)`,
  };
}

/** The plaintext of a stored value; throws SealedSecretError (naming the variable) when it cannot be opened. */
export async function openSecret(keyring: Keyring, stored: string, context: SealContext): Promise<string> {
  const opened = await tryOpenSecret(keyring, stored, context);
  if ('problem' in opened) throw new SealedSecretError(opened.problem);
  return opened.plaintext;
}

/**
 * The release step's question: is this value stored otherwise than `sealSecret` would store it now (plaintext
 * while a key is set, issue 21's v1 envelope, or an older key)? Answers the plaintext to re-seal, or undefined.
 * Throws SealedSecretError when no key opens it (or it is sealed and no key is set).
 */
export async function plaintextToReseal(
  keyring: Keyring,
  stored: string,
  context: SealContext,
): Promise<string | undefined> {
  if (stored === '') return undefined;
  const sealed = isSealed(stored);
  if (keyring.secrets.length === 0) {
    // Nothing is sealed without a key, but a value sealed earlier cannot be used: the release step says so.
    if (sealed) throw new SealedSecretError(keyringProblem(keyring, true, context.label)!);
    return undefined;
  }
  if (!sealed) return stored;
  const opened = await tryOpenSecret(keyring, stored, context);
  if ('problem' in opened) throw new SealedSecretError(opened.problem);
  return opened.openedWith === 0 && stored.startsWith('v2.') ? undefined : opened.plaintext;
}
