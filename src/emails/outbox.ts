/**
 * The email outbox (M-2): a domain that causes an email calls `queueEmails` with the transaction of its change, so
 * the email exists exactly when the change does, like its events. Nothing is composed here: the emails worker
 * composes and sends (emails/dispatcher.ts), so a change that causes hundreds (a sweep batch) writes one statement.
 */
import { customerClockIds } from '../db/clock-scope.ts';
import type { Db } from '../db/knex.ts';
import { getSetting } from '../settings/service.ts';
import { insertEmailRows } from './repo.ts';
import { ALWAYS_SENT_EMAIL_TYPES, type EmailType } from '../email-types.ts';

/** The key that refuses an email for an unknown customer, when the email is written (not deferred). */
export const EMAIL_CUSTOMER_FK = 'emails_customer_id_fkey';

/** One email a change causes: its type, the customer it goes to, the occasion it is sent once for, and its facts. */
export interface NewEmail {
  type: EmailType;
  customerId: string;
  /**
   * What makes it once per occasion (M-3): e.g. the invoice's id for `invoice.issued`, the payment's id for a
   * receipt, `<subscription id>:<trial end>` for a reminder. A second email for the same occasion is not written.
   */
  occasion: string;
  /** The facts as of the change (amounts, ids); the template reads them when it composes. */
  data: Record<string, unknown>;
}

/**
 * Writes the emails in `trx`, due at once; a type switched off (M-4) is kept as `skipped`. Answers the ids of those
 * written (not those left out as already sent for their occasion).
 */
export async function queueEmails(trx: Db, emails: NewEmail[]): Promise<string[]> {
  if (emails.length === 0) return [];
  const enabled = new Set<EmailType>(await getSetting(trx, 'emails.enabled_types'));
  // TC-5: a test clock customer's emails note the clock, and the mailer keeps them `captured`.
  const clocks = await customerClockIds(
    trx,
    emails.map((e) => e.customerId),
  );
  return insertEmailRows(
    trx,
    emails.map((email) => {
      const on = enabled.has(email.type) || ALWAYS_SENT_EMAIL_TYPES.includes(email.type);
      return {
        type: email.type,
        customer_id: email.customerId,
        test_clock_id: clocks.get(email.customerId) ?? null,
        occasion: email.occasion,
        data: email.data,
        status: on ? 'queued' : 'skipped',
        due: on,
      };
    }),
  );
}
