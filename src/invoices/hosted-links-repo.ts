import type { Db } from '../db/knex.ts';

export interface HostedLinkRow {
  invoice_id: string;
  token_hash: string;
  token: string;
  created_at: Date;
}

export async function selectHostedLinks(db: Db, invoiceIds: string[]): Promise<HostedLinkRow[]> {
  if (invoiceIds.length === 0) return [];
  return db('hosted_invoice_links').whereIn('invoice_id', invoiceIds);
}

/** Inserts links for invoices that have none; a concurrent reader's link for the same invoice wins. */
export async function insertMissingHostedLinks(db: Db, rows: Omit<HostedLinkRow, 'created_at'>[]): Promise<void> {
  if (rows.length === 0) return;
  await db('hosted_invoice_links').insert(rows).onConflict('invoice_id').ignore();
}

/** H-3: the invoice's link becomes this one; the old token stops working in the same statement. */
export async function replaceHostedLinkRow(db: Db, row: Omit<HostedLinkRow, 'created_at'>): Promise<void> {
  await db('hosted_invoice_links')
    .insert({ ...row, created_at: db.fn.now() })
    .onConflict('invoice_id')
    .merge(['token_hash', 'token', 'created_at']);
}

/** The invoice a token's hash names (H-1: looked up by the hash's unique index, never by the token). */
export async function findInvoiceIdByTokenHash(db: Db, tokenHash: string): Promise<string | undefined> {
  const row = await db('hosted_invoice_links').select('invoice_id').where({ token_hash: tokenHash }).first();
  return row?.invoice_id;
}

export function listHostedLinkRows(db: Db): Promise<Pick<HostedLinkRow, 'invoice_id' | 'token'>[]> {
  return db('hosted_invoice_links').select('invoice_id', 'token').orderBy('invoice_id');
}

/** Stores the token sealed again, unless it was replaced meanwhile (H-3). */
export async function updateHostedLinkToken(db: Db, invoiceId: string, was: string, token: string): Promise<void> {
  await db('hosted_invoice_links').where({ invoice_id: invoiceId, token: was }).update({ token });
}
