import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';
import { type PreparedStatement, queryPrepared } from '../db/prepared.ts';

export interface ApiKeyRow {
  id: string;
  name: string;
  customer_id: string;
  prefix: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

const COLUMNS = ['id', 'name', 'customer_id', 'prefix', 'expires_at', 'revoked_at', 'last_used_at', 'created_at'];

export async function insertApiKey(
  db: Db,
  row: { name: string; customer_id: string; prefix: string; key_hash: string; expires_at: Date | null },
): Promise<ApiKeyRow> {
  const [created] = await db('api_keys').insert(row).returning(COLUMNS);
  return created as ApiKeyRow;
}

export async function listApiKeyRows(db: Db, page: PageQuery, customerId?: string): Promise<Page<ApiKeyRow>> {
  const query = db('api_keys').select(COLUMNS);
  if (customerId) query.where({ customer_id: customerId });
  return paginate<ApiKeyRow>(query, 'api_keys', page);
}

/** Marks the key revoked and answers it; undefined when there is no such unrevoked key. */
export async function revokeApiKeyRow(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db('api_keys')
    .where({ id })
    .whereNull('revoked_at')
    .update({ revoked_at: db.fn.now() })
    .returning(COLUMNS);
  return row as ApiKeyRow | undefined;
}

/**
 * Every v1 request's key check, as a prepared statement (db/prepared.ts): issue 35's usage read and ingestion
 * missed their aims with it as a knex query beside their own (knex's builder and planning on each request).
 */
const FIND_USABLE_KEY: PreparedStatement = {
  name: 'api_keys_find_usable',
  text: `select id, customer_id, last_used_at from api_keys
    where key_hash = $1 and revoked_at is null and (expires_at is null or expires_at > now()) limit 1`,
};

export async function findUsableKey(
  db: Db,
  keyHash: string,
): Promise<Pick<ApiKeyRow, 'id' | 'customer_id' | 'last_used_at'> | undefined> {
  const [row] = await queryPrepared<Pick<ApiKeyRow, 'id' | 'customer_id' | 'last_used_at'>>(db, FIND_USABLE_KEY, [
    keyHash,
  ]);
  return row;
}

/** Updates last_used_at unless it was updated within the last minute (one write a minute per key). */
export async function touchApiKey(db: Db, id: string): Promise<void> {
  await db('api_keys')
    .where({ id })
    .andWhere((q) => q.whereNull('last_used_at').orWhereRaw("last_used_at < now() - interval '1 minute'"))
    .update({ last_used_at: db.fn.now() });
}
