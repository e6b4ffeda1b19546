/**
 * Portal sessions (P-1): a link of one hour that works once signs a browser in for 12 hours. Links and sessions are
 * random 256-bit tokens kept only as their SHA-256, so the table gives nobody a way in. An admin session is no portal
 * session and the reverse: each is looked up in its own table by its own cookie.
 */
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { publicBaseUrl, type Config } from '../config.ts';
import { randomToken, sha256Hex } from '../crypto/tokens.ts';
import { assertCustomerExists } from '../customers/service.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import {
  deleteEndedPortalRows,
  deletePortalSession,
  findLivePortalSession,
  insertPortalLink,
  insertPortalSession,
  usePortalLink,
  type PortalSessionRow,
} from './repo.ts';

export const PORTAL_LINK_TTL_MS = 60 * 60 * 1000;
export const PORTAL_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** Tokens look like this; anything else is never looked up. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface PortalLink {
  url: string;
  expiresAt: Date;
}

export interface NewPortalSession {
  token: string;
  expiresAt: Date;
  customerId: string;
  /** The page the link was made for (a deep link), when it names one. */
  path?: string | undefined;
}

/**
 * P-1: a sign-in link for the customer, valid an hour and once; `returnUrl` becomes the portal's `Back to <host>`,
 * `path` the page it opens (else the overview). Audited as the admin's (or the API key's) action on the customer.
 */
export async function createPortalLink(
  db: Db,
  config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>,
  input: { customerId: string; returnUrl?: string | undefined; path?: string | undefined },
  actor: Actor,
): Promise<PortalLink> {
  const token = randomToken(32);
  const expiresAt = new Date(Date.now() + PORTAL_LINK_TTL_MS);
  await inTransaction(db, async (trx) => {
    await assertCustomerExists(trx, input.customerId);
    await insertPortalLink(trx, {
      customer_id: input.customerId,
      token_hash: sha256Hex(token),
      return_url: input.returnUrl ?? null,
      path: input.path ?? null,
      expires_at: expiresAt,
    });
    await recordAudits(trx, actor, [
      {
        action: 'customer.portal_session_create',
        targetType: 'customer',
        targetId: input.customerId,
        after: { expires_at: expiresAt, return_url: input.returnUrl ?? null, path: input.path ?? null },
      },
    ]);
  });
  return { url: `${publicBaseUrl(config)}/portal/s/${token}`, expiresAt };
}

/** A new session for the customer (a used link, a right code), in the caller's transaction. */
export async function startPortalSession(
  trx: Db,
  customerId: string,
  returnUrl: string | null,
): Promise<NewPortalSession> {
  const token = randomToken(32);
  const expiresAt = new Date(Date.now() + PORTAL_SESSION_TTL_MS);
  await insertPortalSession(trx, {
    customer_id: customerId,
    token_hash: sha256Hex(token),
    return_url: returnUrl,
    expires_at: expiresAt,
  });
  return { token, expiresAt, customerId };
}

/** Opens a link: its session, or not_found when the link is unknown, used or expired (P-1). */
export async function redeemPortalLink(db: Db, token: string): Promise<NewPortalSession> {
  if (!TOKEN_SHAPE.test(token)) throw new AppError('not_found', 'This portal link is not valid');
  return inTransaction(db, async (trx) => {
    const link = await usePortalLink(trx, sha256Hex(token));
    if (!link) throw new AppError('not_found', 'This portal link is not valid');
    const session = await startPortalSession(trx, link.customer_id, link.return_url);
    return { ...session, path: link.path ?? undefined };
  });
}

/** The signed-in customer's session behind a `portal_session` cookie; unauthenticated without a live one. */
export async function authenticatePortalSession(db: Db, token: string | undefined): Promise<PortalSessionRow> {
  const session = token && TOKEN_SHAPE.test(token) ? await findLivePortalSession(db, sha256Hex(token)) : undefined;
  if (!session) throw new AppError('unauthenticated', 'Sign in to the portal first');
  return session;
}

/** Logout: the session stops working at once. */
export async function endPortalSession(db: Db, token: string | undefined): Promise<void> {
  if (token && TOKEN_SHAPE.test(token)) await deletePortalSession(db, sha256Hex(token));
}

/** The housekeeping job's part: ended links, sessions and codes are deleted. */
export function purgeEndedPortalRows(db: Db, asOf: Date): Promise<number> {
  return deleteEndedPortalRows(db, asOf);
}
