/**
 * License signing keys (D-100): created at release when none exists, rotated by an admin, published as a
 * JWKS. The private key of each kid is read and decrypted once per process and kept; a rotation made by
 * another process is seen because the signer asks for the current kid with the license it signs.
 */
import type { KeyObject } from 'node:crypto';
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import {
  generateSigningKeyPair,
  openPrivateKey,
  privateKeyFromPem,
  sealPrivateKey,
  signingJwk,
  type KeyEncryption,
  type SigningJwk,
} from './signing-key-crypto.ts';
import {
  findCurrentSigningKeyRow,
  findSigningKeyRow,
  insertFirstSigningKeyRow,
  insertSigningKeyRow,
  listPublicKeyRows,
  listSigningKeyRows,
  lockSigningKeys,
  retireCurrentSigningKeyRow,
  updatePrivateKey,
  type SigningKeyInsert,
  type SigningKeyRow,
} from './signing-keys-repo.ts';

/**
 * LICENSE_SIGNING_SECRET as a list: the first seals, any of them opens. Several, comma-separated, while
 * the secret changes (as the providers' secrets): the release step re-seals every key with the first.
 */
export function signingSecrets(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

async function newKeyRow(secrets: string[]): Promise<SigningKeyInsert> {
  const pair = generateSigningKeyPair();
  const sealed = await sealPrivateKey(pair.kid, pair.privateKey, secrets[0]);
  return {
    kid: pair.kid,
    public_key: pair.publicKey,
    private_key: sealed.privateKey,
    private_key_encryption: sealed.encryption,
  };
}

/** Creates the first key unless one is current; safe when several processes do it at once. */
export async function ensureSigningKey(db: Db, secrets: string[]): Promise<void> {
  if (await findCurrentSigningKeyRow(db)) return;
  await insertFirstSigningKeyRow(db, await newKeyRow(secrets));
}

type Opened = { key: KeyObject; sealedWith?: number } | { problem: string };

/** Why a key stored so cannot sign under these secrets (a sentence naming the variable), or undefined. */
function storageProblem(kid: string, encrypted: boolean, secrets: string[]): string | undefined {
  if (!encrypted && secrets.length > 0)
    return (
      `License signing key ${kid} is stored unencrypted while LICENSE_SIGNING_SECRET is set: ` +
      `run the release step, which encrypts it`
    );
  if (encrypted && secrets.length === 0)
    return `License signing key ${kid} is encrypted: set LICENSE_SIGNING_SECRET to the secret it was stored with`;
  return undefined;
}

/** The private key of a row and the index of the secret that opened it, or why it cannot be opened. */
async function openRow(row: SigningKeyRow, secrets: string[]): Promise<Opened> {
  if (row.private_key_encryption === 'none') return { key: privateKeyFromPem(row.private_key) };
  const problem = storageProblem(row.kid, true, secrets);
  if (problem) return { problem };
  for (const [index, secret] of secrets.entries()) {
    const key = await openPrivateKey(row.kid, row.private_key, secret);
    if (key) return { key, sealedWith: index };
  }
  return {
    problem:
      `LICENSE_SIGNING_SECRET does not decrypt license signing key ${row.kid}: set the secret it was stored ` +
      `with (old and new comma-separated while changing it)`,
  };
}

/**
 * The release step (D-100): creates the first key when none exists, seals with the first secret every
 * key stored unencrypted or under an older secret, and fails with one line naming LICENSE_SIGNING_SECRET
 * when the current key cannot be opened (the secret was lost or mistyped). A rotated key no secret opens
 * is left as it is: its private half never signs again. Returns the kids it re-sealed.
 */
export async function prepareSigningKeys(db: Db, secrets: string[]): Promise<string[]> {
  await ensureSigningKey(db, secrets);
  return inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    const resealed: string[] = [];
    for (const row of await listSigningKeyRows(trx)) {
      const plain = row.private_key_encryption === 'none';
      const opened = await openRow(row, secrets);
      if (!('key' in opened)) {
        if (row.rotated_at === null) throw new AppError('setup_failed', opened.problem);
        continue;
      }
      const stale = secrets.length > 0 && (plain || opened.sealedWith !== 0);
      if (!stale) continue;
      const sealed = await sealPrivateKey(row.kid, opened.key, secrets[0]);
      await updatePrivateKey(trx, row.kid, {
        private_key: sealed.privateKey,
        private_key_encryption: sealed.encryption,
      });
      resealed.push(row.kid);
    }
    return resealed;
  });
}

// Decrypted private keys by kid and storage, for the life of the process: scrypt costs tens of
// milliseconds, signing microseconds. A kid is the hash of its public key, so one kid names one key pair
// in any database; the storage is in the key so that a key re-sealed by the release step is opened again.
const openedKeys = new Map<string, Promise<KeyObject>>();

/** The key a checkout signs with, as its statement read it: the current kid and how it is stored. */
export interface CurrentKey {
  kid: string;
  encryption: KeyEncryption;
}

/**
 * The private key of `current`, decrypted once per process. Whether it may be used under these secrets is
 * decided on every call: a key stored unencrypted while a secret is set is refused, not used quietly. The
 * failure is a plain Error: logged with its sentence, answered as internal_error.
 */
export async function signingKeyOf(db: Db, current: CurrentKey, secrets: string[]): Promise<KeyObject> {
  const problem = storageProblem(current.kid, current.encryption !== 'none', secrets);
  if (problem) throw new Error(problem);
  const cacheKey = `${current.kid}:${current.encryption}`;
  let opening = openedKeys.get(cacheKey);
  if (!opening) {
    opening = (async () => {
      const row = await findSigningKeyRow(db, current.kid);
      if (!row) throw new Error(`License signing key ${current.kid} does not exist`);
      const opened = await openRow(row, secrets);
      if (!('key' in opened)) throw new Error(opened.problem);
      return opened.key;
    })();
    openedKeys.set(cacheKey, opening);
    // A failure is not kept: the next request tries again (after the release step fixed it).
    opening.catch(() => openedKeys.delete(cacheKey));
  }
  return opening;
}

/** The current key, creating the first one when none exists yet (a database the release step never ran on). */
export async function currentSigningKey(db: Db, secrets: string[]): Promise<CurrentKey> {
  await ensureSigningKey(db, secrets);
  const row = (await findCurrentSigningKeyRow(db))!;
  return { kid: row.kid, encryption: row.private_key_encryption };
}

/** GET /api/licenses/signing-keys: every key's public half, rotated ones too, oldest first. */
export async function publishedSigningKeys(db: Db): Promise<{ keys: SigningJwk[] }> {
  return { keys: (await listPublicKeyRows(db)).map((row) => signingJwk(row.kid, row.public_key)) };
}

/**
 * POST /api/licenses/signing-keys/rotate: a new current key; the old one stays published so the files it
 * signed still verify. One audit row, naming the kids only.
 */
export async function rotateSigningKey(db: Db, secrets: string[], actor: Actor): Promise<SigningJwk> {
  const row = await newKeyRow(secrets);
  return inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    const retired = await retireCurrentSigningKeyRow(trx);
    const created = await insertSigningKeyRow(trx, row);
    await recordAudits(trx, actor, [
      {
        action: 'license_signing_key.rotate',
        targetType: 'license_signing_key',
        targetId: created.kid,
        before: { current_kid: retired?.kid ?? null },
        after: { current_kid: created.kid },
      },
    ]);
    return signingJwk(created.kid, created.public_key);
  });
}
