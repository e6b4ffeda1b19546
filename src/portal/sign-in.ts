/**
 * Signing in with an emailed code (P-2): 6 digits, valid 15 minutes, at most 5 tries, one active code per customer
 * (a new code replaces the old one). A code is kept only as the SHA-256 of its row's id and the digits.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { sha256Hex, secretsEqual } from '../crypto/tokens.ts';
import { findCustomerByEmail } from '../customers/service.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import { portalCodeEmail } from '../emails/portal-code.ts';
import { queueEmails } from '../emails/outbox.ts';
import { AppError } from '../errors.ts';
import { enqueue } from '../queue/enqueue.ts';
import { countPortalCodeTry, deletePortalCode, lockPortalCode, replacePortalCode } from './repo.ts';
import { sendPortalCodeJob } from './send-code.job.ts';
import { startPortalSession, type NewPortalSession } from './sessions.ts';

export const CODE_TTL_MINUTES = 15;
export const CODE_MAX_TRIES = 5;

const codeHash = (codeId: string, code: string) => sha256Hex(`${codeId}:${code}`);

/**
 * The login form's one write, whatever the address: the job that looks the customer up and emails the code. The
 * answer and its work are the same for an address no customer has (P-2).
 */
export async function requestPortalCode(db: Db, email: string): Promise<void> {
  await enqueue(db, sendPortalCodeJob, { email: email.trim().slice(0, 320) });
}

/** The job's work: a new code for the customer with this address, emailed with it; false when there is none. */
export async function sendPortalCode(db: Db, email: string): Promise<boolean> {
  const customer = await findCustomerByEmail(db, email);
  if (!customer) return false;
  const id = randomUUID();
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  await inTransaction(db, async (trx) => {
    await replacePortalCode(trx, {
      id,
      customer_id: customer.id,
      code_hash: codeHash(id, code),
      expires_at: new Date(Date.now() + CODE_TTL_MINUTES * 60_000),
    });
    await queueEmails(trx, [portalCodeEmail(customer.id, id, code, CODE_TTL_MINUTES)]);
  });
  return true;
}

/** One refusal for every failure, so it tells nothing of the address or of the code's state. */
const refused = () =>
  new AppError('unauthenticated', 'The code is wrong or no longer valid: ask for a new code', {
    details: [{ path: 'code', message: 'wrong, used or expired (a code takes 5 tries at most)' }],
  });

/**
 * P-2: the customer's session when `code` is their active code; a wrong try is counted (committed even though the
 * answer is a refusal), the fifth locks the code, and a used code is gone.
 */
export async function signInWithCode(db: Db, email: string, code: string): Promise<NewPortalSession> {
  const customer = await findCustomerByEmail(db, email.trim());
  const outcome = await inTransaction(db, async (trx) => {
    const row = customer ? await lockPortalCode(trx, customer.id) : undefined;
    if (!row || row.tries >= CODE_MAX_TRIES || row.expires_at.getTime() <= Date.now()) return undefined;
    if (!/^\d{6}$/.test(code.trim()) || !secretsEqual(codeHash(row.id, code.trim()), row.code_hash)) {
      await countPortalCodeTry(trx, row.customer_id);
      return undefined;
    }
    await deletePortalCode(trx, row.customer_id);
    return startPortalSession(trx, row.customer_id, null);
  });
  if (!outcome) throw refused();
  return outcome;
}
