/**
 * License signing keys (D-100): created at release when none exists, rotated by an admin, published as a
 * JWKS. The private key of each kid is read and decrypted once per process and kept; a rotation made by
 * another process is seen because the signer asks for the current kid with the license it signs.
 */
import type { KeyObject } from 'node:crypto';
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import { keyringProblem, plaintextToReseal, SealedSecretError, type Keyring } from '../crypto/envelope.ts';
import {
  generateSigningKeyPair,
  openPrivateKey,
  privateKeyContext,
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
} from './signing-keys-repo.ts';

async function newKeyRow(keyring: Keyring): Promise<SigningKeyInsert> {
  const pair = generateSigningKeyPair();
  const sealed = await sealPrivateKey(pair.kid, pair.privateKey, keyring);
  return {
    kid: pair.kid,
    public_key: pair.publicKey,
    private_key: sealed.privateKey,
    private_key_encryption: sealed.encryption,
  };
}

/** Creates the first key unless one is current; safe when several processes do it at once. */
export async function ensureSigningKey(db: Db, keyring: Keyring): Promise<void> {
  if (await findCurrentSigningKeyRow(db)) return;
  await insertFirstSigningKeyRow(db, await newKeyRow(keyring));
}

/**
 * The release step (D-100, issue 33): creates the first key when none exists, seals with the first key of
 * ENCRYPTION_KEY every key stored unencrypted, in issue 21's envelope or under an older key, and fails (a
 * SealedSecretError naming the variable) when the current key cannot be opened (the key was lost or mistyped). A
 * rotated key no given key opens is left as it is: its private half never signs again. Returns the kids it re-sealed.
 */
export async function prepareSigningKeys(db: Db, keyring: Keyring): Promise<string[]> {
  await ensureSigningKey(db, keyring);
  return inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    const resealed: string[] = [];
    for (const row of await listSigningKeyRows(trx)) {
      let pem: string | undefined;
      try {
        pem = await plaintextToReseal(keyring, row.private_key, privateKeyContext(row.kid));
      } catch (error) {
        if (error instanceof SealedSecretError && row.rotated_at !== null) continue;
        throw error;
      }
      if (pem === undefined) continue;
      const sealed = await sealPrivateKey(row.kid, pem, keyring);
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
 * The private key of `current`, decrypted once per process. Whether it may be used under this keyring is
 * decided on every call: a key stored unencrypted while a secret is set is refused, not used quietly. The
 * failure is a plain Error: logged with its sentence, answered as internal_error.
 */
export async function signingKeyOf(db: Db, current: CurrentKey, keyring: Keyring): Promise<KeyObject> {
  const problem = keyringProblem(keyring, current.encryption !== 'none', `license signing key ${current.kid}`);
  if (problem) throw new SealedSecretError(problem);
  const cacheKey = `${current.kid}:${current.encryption}`;
  let opening = openedKeys.get(cacheKey);
  if (!opening) {
    opening = (async () => {
      const row = await findSigningKeyRow(db, current.kid);
      if (!row) throw new Error(`License signing key ${current.kid} does not exist`);
      return openPrivateKey(row.kid, row.private_key, keyring);
    })();
    openedKeys.set(cacheKey, opening);
    // A failure is not kept: the next request tries again (after the release step fixed it).
    opening.catch(() => openedKeys.delete(cacheKey));
  }
  return opening;
}

/** The current key, creating the first one when none exists yet (a database the release step never ran on). */
export async function currentSigningKey(db: Db, keyring: Keyring): Promise<CurrentKey> {
  await ensureSigningKey(db, keyring);
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
export async function rotateSigningKey(db: Db, keyring: Keyring, actor: Actor): Promise<SigningJwk> {
  const row = await newKeyRow(keyring);
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
