/** The emails as the API and the console read them (M-5), and Resend. */
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import type { PageQuery } from '../db/paginate.ts';
import { notFound } from '../errors.ts';
import {
  claimDueEmailRows,
  type EmailListFilters,
  type EmailRow,
  findEmailRow,
  insertEmailRows,
  listEmailRows,
  updateClaimedEmail,
} from './repo.ts';

export type { EmailListFilters };

export function listEmails(db: Db, page: PageQuery, filters: EmailListFilters) {
  return listEmailRows(db, page, filters);
}

export async function getEmail(db: Db, id: string): Promise<EmailRow> {
  const email = await findEmailRow(db, id);
  if (!email) throw notFound('Email');
  return email;
}

/**
 * M-5: a new email row with the same content (as composed for the original, to the same recipient), queued now with
 * a Message-ID of its own, whatever the original's status; the admin's action is audited with it.
 */
export async function resendEmail(db: Db, id: string, actor: Actor): Promise<EmailRow> {
  return inTransaction(db, async (trx) => {
    const original = await findEmailRow(trx, id);
    if (!original) throw notFound('Email');
    const [copyId] = await insertEmailRows(trx, [
      {
        type: original.type,
        customer_id: original.customer_id,
        test_clock_id: original.test_clock_id,
        occasion: original.occasion,
        data: original.data,
        status: 'queued',
        due: true,
        to_address: original.to_address,
        subject: original.subject,
        html: original.html,
        text_body: original.text_body,
        resent_from: original.id,
      },
    ]);
    await recordAudits(trx, actor, [
      { action: 'email.resend', targetType: 'email', targetId: original.id, after: { resent_as: copyId! } },
    ]);
    return (await findEmailRow(trx, copyId!))!;
  });
}

/** The emails worker's claim (mailer/dispatcher.ts): due emails, each leased to this worker for `leaseMs`. */
export function claimDueEmails(db: Db, limit: number, leaseMs: number): Promise<EmailRow[]> {
  return claimDueEmailRows(db, limit, leaseMs);
}

/** What an attempt changed on a claimed email, written only while the claim's lease is still this worker's. */
export const recordClaimedEmail = updateClaimedEmail;
