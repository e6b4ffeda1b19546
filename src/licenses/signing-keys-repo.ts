import type { Db } from '../db/knex.ts';
import type { KeyEncryption } from './signing-key-crypto.ts';

export interface SigningKeyRow {
  kid: string;
  public_key: string;
  private_key: string;
  private_key_encryption: KeyEncryption;
  created_at: Date;
  rotated_at: Date | null;
}

export type SigningKeyInsert = Pick<SigningKeyRow, 'kid' | 'public_key' | 'private_key' | 'private_key_encryption'>;

/** The public halves, oldest first (the JWKS): never the private key. */
export async function listPublicKeyRows(
  db: Db,
): Promise<Pick<SigningKeyRow, 'kid' | 'public_key' | 'created_at' | 'rotated_at'>[]> {
  return db('license_signing_keys')
    .select('kid', 'public_key', 'created_at', 'rotated_at')
    .orderBy([{ column: 'created_at' }, { column: 'kid' }]);
}

export async function findSigningKeyRow(db: Db, kid: string): Promise<SigningKeyRow | undefined> {
  return db('license_signing_keys').where({ kid }).first();
}

export async function findCurrentSigningKeyRow(db: Db): Promise<SigningKeyRow | undefined> {
  return db('license_signing_keys').whereNull('rotated_at').first();
}

export async function listSigningKeyRows(db: Db): Promise<SigningKeyRow[]> {
  return db('license_signing_keys').select('*').orderBy('created_at');
}

/**
 * Inserts `row` as the current key unless one exists: the partial unique index decides between two
 * processes creating the first key at the same moment, and the loser's insert does nothing.
 */
export async function insertFirstSigningKeyRow(db: Db, row: SigningKeyInsert): Promise<void> {
  await db.raw(
    `insert into license_signing_keys (kid, public_key, private_key, private_key_encryption) values (?, ?, ?, ?)
                on conflict ((true)) where rotated_at is null do nothing`,
    [row.kid, row.public_key, row.private_key, row.private_key_encryption],
  );
}

/** Rotations and re-encryptions of one database happen one at a time (transaction-scoped lock). */
export async function lockSigningKeys(trx: Db): Promise<void> {
  await trx.raw(`select pg_advisory_xact_lock(hashtext('license_signing_keys'))`);
}

/** Marks the current key rotated; the key that was current, if any. */
export async function retireCurrentSigningKeyRow(trx: Db): Promise<{ kid: string } | undefined> {
  const [row] = await trx('license_signing_keys')
    .whereNull('rotated_at')
    .update({ rotated_at: trx.fn.now() })
    .returning('kid');
  return row as { kid: string } | undefined;
}

export async function insertSigningKeyRow(trx: Db, row: SigningKeyInsert): Promise<SigningKeyRow> {
  const [created] = await trx('license_signing_keys').insert(row).returning('*');
  return created as SigningKeyRow;
}

export async function updatePrivateKey(
  trx: Db,
  kid: string,
  sealed: Pick<SigningKeyRow, 'private_key' | 'private_key_encryption'>,
): Promise<void> {
  await trx('license_signing_keys').where({ kid }).update(sealed);
}
