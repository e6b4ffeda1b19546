/**
 * The hosted invoice page's links (H-1, H-3): `<PUBLIC_BASE_URL>/i/<token>`, a random 256-bit token per invoice that
 * is not a draft. A token is found through the SHA-256 of what was asked (its unique index), so a lookup's timing
 * says nothing of the stored tokens; the token itself is kept in the envelope of every secret (crypto/envelope.ts)
 * so that every read answers the same link. A link is made the first time an invoice's link is asked for (its
 * answer, its email), not by the statement that issues it: issuing stays the one statement it is.
 */
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { publicBaseUrl, type Config } from '../config.ts';
import {
  type Keyring,
  keyringOf,
  openSecret,
  plaintextToReseal,
  sealSecret,
  type SealContext,
} from '../crypto/envelope.ts';
import { randomToken, sha256Hex } from '../crypto/tokens.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import { AppError, notFound } from '../errors.ts';
import type { InvoiceRow } from './repo.ts';
import { findInvoice, lockInvoice } from './service.ts';
import {
  findInvoiceIdByTokenHash,
  insertMissingHostedLinks,
  listHostedLinkRows,
  replaceHostedLinkRow,
  selectHostedLinks,
  updateHostedLinkToken,
} from './hosted-links-repo.ts';

type LinkConfig = Pick<Config, 'PUBLIC_BASE_URL' | 'PORT' | 'ENCRYPTION_KEY' | 'LICENSE_SIGNING_SECRET'>;

const context = (invoiceId: string): SealContext => ({
  aad: `hosted_invoice_links.token:${invoiceId}`,
  label: `hosted page token of invoice ${invoiceId}`,
});

/** Tokens look like this; anything else is not looked up. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function hostedUrl(config: LinkConfig, token: string): string {
  return `${publicBaseUrl(config)}/i/${token}`;
}

async function newLink(config: LinkConfig, invoiceId: string) {
  const token = randomToken(32);
  return {
    token,
    row: {
      invoice_id: invoiceId,
      token_hash: sha256Hex(token),
      token: await sealSecret(keyringOf(config), token, context(invoiceId)),
    },
  };
}

/** Each invoice's hostedUrl (null for a draft), making the links of those that have none yet. */
export async function hostedUrlsOf(
  db: Db,
  config: LinkConfig,
  invoices: Pick<InvoiceRow, 'id' | 'status'>[],
): Promise<Map<string, string | null>> {
  const urls = new Map<string, string | null>(invoices.map((i) => [i.id, null]));
  const sent = invoices.filter((i) => i.status !== 'draft').map((i) => i.id);
  let links = await selectHostedLinks(db, sent);
  const missing = sent.filter((id) => !links.some((l) => l.invoice_id === id));
  if (missing.length > 0) {
    await insertMissingHostedLinks(db, await Promise.all(missing.map(async (id) => (await newLink(config, id)).row)));
    links = await selectHostedLinks(db, sent);
  }
  const keyring = keyringOf(config);
  for (const link of links) {
    urls.set(link.invoice_id, hostedUrl(config, await openSecret(keyring, link.token, context(link.invoice_id))));
  }
  return urls;
}

export async function hostedUrlOf(db: Db, config: LinkConfig, invoice: Pick<InvoiceRow, 'id' | 'status'>) {
  return (await hostedUrlsOf(db, config, [invoice])).get(invoice.id) ?? null;
}

/** H-3: a new token for the invoice; the old link is 404 from the commit on. Audited as the admin's action. */
export async function replaceHostedLink(db: Db, config: LinkConfig, invoiceId: string, actor: Actor): Promise<string> {
  return inTransaction(db, async (trx) => {
    const invoice = await lockInvoice(trx, invoiceId);
    if (!invoice) throw notFound('Invoice');
    if (invoice.status === 'draft')
      throw new AppError('invalid_status_transition', 'A draft invoice has no hosted page: issue it first');
    const { token, row } = await newLink(config, invoiceId);
    await replaceHostedLinkRow(trx, row);
    await recordAudits(trx, actor, [
      {
        action: 'invoice.replace_hosted_link',
        targetType: 'invoice',
        targetId: invoiceId,
        after: { hosted_link: 'replaced' },
      },
    ]);
    return hostedUrl(config, token);
  });
}

/** The invoice a hosted page token opens; a malformed, unknown or replaced token, or a draft's, is not found. */
export async function findHostedInvoice(db: Db, token: string): Promise<InvoiceRow> {
  const invoiceId = TOKEN_SHAPE.test(token) ? await findInvoiceIdByTokenHash(db, sha256Hex(token)) : undefined;
  const invoice = invoiceId ? await findInvoice(db, invoiceId) : undefined;
  if (!invoice || invoice.status === 'draft') throw notFound('Invoice');
  return invoice;
}

/**
 * The release step (process/seal-secrets.ts): every stored token as `sealSecret` would store it now (plaintext kept
 * before ENCRYPTION_KEY was set, or sealed with an older key). Answers how many it sealed again.
 */
export async function sealHostedLinkTokens(db: Db, keyring: Keyring): Promise<number> {
  let sealed = 0;
  for (const row of await listHostedLinkRows(db)) {
    const plaintext = await plaintextToReseal(keyring, row.token, context(row.invoice_id));
    if (plaintext === undefined) continue;
    await updateHostedLinkToken(
      db,
      row.invoice_id,
      row.token,
      await sealSecret(keyring, plaintext, context(row.invoice_id)),
    );
    sealed++;
  }
  return sealed;
}
