/** SQL of the portal's links, sessions and sign-in codes (P-1, P-2); every secret is looked up by its SHA-256. */
import type { Db } from '../db/knex.ts';

export interface PortalLinkRow {
  id: string;
  customer_id: string;
  return_url: string | null;
  /** The portal page the link opens; null: the overview. */
  path: string | null;
  expires_at: Date;
  used_at: Date | null;
}

export interface PortalSessionRow {
  id: string;
  customer_id: string;
  return_url: string | null;
  expires_at: Date;
}

export interface PortalCodeRow {
  id: string;
  customer_id: string;
  code_hash: string;
  tries: number;
  expires_at: Date;
}

const LINK_COLUMNS = ['id', 'customer_id', 'return_url', 'path', 'expires_at', 'used_at'];

export async function insertPortalLink(
  db: Db,
  row: { customer_id: string; token_hash: string; return_url: string | null; path: string | null; expires_at: Date },
): Promise<PortalLinkRow> {
  const [link] = await db('portal_links').insert(row).returning(LINK_COLUMNS);
  return link;
}

/**
 * Marks the link used and answers it, when it is known, unused and unexpired: one statement, so two browsers
 * opening one link at once get one session between them. Undefined otherwise.
 */
export async function usePortalLink(db: Db, tokenHash: string): Promise<PortalLinkRow | undefined> {
  const [link] = await db('portal_links')
    .where({ token_hash: tokenHash, used_at: null })
    .where('expires_at', '>', db.fn.now())
    .update({ used_at: db.fn.now() })
    .returning(LINK_COLUMNS);
  return link;
}

export async function insertPortalSession(
  db: Db,
  row: { customer_id: string; token_hash: string; return_url: string | null; expires_at: Date },
): Promise<PortalSessionRow> {
  const [session] = await db('portal_sessions')
    .insert(row)
    .returning(['id', 'customer_id', 'return_url', 'expires_at']);
  return session;
}

export function findLivePortalSession(db: Db, tokenHash: string): Promise<PortalSessionRow | undefined> {
  return db('portal_sessions')
    .where({ token_hash: tokenHash })
    .where('expires_at', '>', db.fn.now())
    .first(['id', 'customer_id', 'return_url', 'expires_at']);
}

export async function deletePortalSession(db: Db, tokenHash: string): Promise<void> {
  await db('portal_sessions').where({ token_hash: tokenHash }).delete();
}

/** A new code for the customer replaces any code it had (one active code per customer, P-2). */
export async function replacePortalCode(
  db: Db,
  row: { id: string; customer_id: string; code_hash: string; expires_at: Date },
): Promise<void> {
  await db('portal_codes')
    .insert({ ...row, tries: 0 })
    .onConflict('customer_id')
    .merge(['id', 'code_hash', 'expires_at', 'tries', 'created_at']);
}

export function lockPortalCode(db: Db, customerId: string): Promise<PortalCodeRow | undefined> {
  return db('portal_codes')
    .where({ customer_id: customerId })
    .forUpdate()
    .first(['id', 'customer_id', 'code_hash', 'tries', 'expires_at']);
}

export async function countPortalCodeTry(db: Db, customerId: string): Promise<void> {
  await db('portal_codes')
    .where({ customer_id: customerId })
    .update({ tries: db.raw('tries + 1') });
}

export async function deletePortalCode(db: Db, customerId: string): Promise<void> {
  await db('portal_codes').where({ customer_id: customerId }).delete();
}

/** Links, sessions and codes past their end: nothing can use them any more (the housekeeping job). */
export async function deleteEndedPortalRows(db: Db, asOf: Date): Promise<number> {
  const links = await db('portal_links').where('expires_at', '<=', asOf).delete();
  const sessions = await db('portal_sessions').where('expires_at', '<=', asOf).delete();
  const codes = await db('portal_codes').where('expires_at', '<=', asOf).delete();
  return links + sessions + codes;
}
