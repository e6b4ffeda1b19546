import type { Db } from '../db/knex.ts';
import { IDEMPOTENCY_RETENTION_HOURS } from '../housekeeping/service.ts';

export interface StoredResponse {
  request_hash: string;
  response_status: number;
  /** The answer's JSON text, as sent (text, not jsonb: jsonb refuses `\u0000`, which a refusal may echo). */
  response_body: string | null;
  response_headers: Record<string, string> | null;
}

/** Holds the key for the rest of the transaction; false when another request holds it now. */
export async function tryLockKey(db: Db, scope: string, key: string): Promise<boolean> {
  const result = await db.raw('select pg_try_advisory_xact_lock(hashtext(?), hashtext(?)) as locked', [scope, key]);
  return result.rows[0].locked === true;
}

export async function findStoredResponse(db: Db, scope: string, key: string): Promise<StoredResponse | undefined> {
  return db('idempotency_keys')
    .where({ scope, key })
    .where('created_at', '>', db.raw(`now() - interval '${IDEMPOTENCY_RETENTION_HOURS} hours'`))
    .first('request_hash', 'response_status', 'response_body', 'response_headers');
}

export async function storeResponse(
  db: Db,
  scope: string,
  key: string,
  requestHash: string,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): Promise<void> {
  const row = {
    scope,
    key,
    request_hash: requestHash,
    status: 'completed',
    response_status: status,
    response_body: body === undefined ? null : JSON.stringify(body),
    response_headers: JSON.stringify(headers),
    locked_at: db.fn.now(),
    created_at: db.fn.now(),
  };
  // An expired record of the same key is replaced: after 24 h the key is free again.
  await db('idempotency_keys').insert(row).onConflict(['scope', 'key']).merge();
}
