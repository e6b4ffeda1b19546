/** Every email the service sends (M-3), in the order the console lists them. */
export const EMAIL_TYPES = [
  'invoice.issued',
  'payment.receipt',
  'payment.failed',
  'dunning.final',
  'refund.issued',
  'credit_note.issued',
  'trial.ending',
  'renewal.upcoming',
  'license.issued',
  'portal.code',
] as const;

export type EmailType = (typeof EMAIL_TYPES)[number];

/** M-4: a sign-in code is the customer's only way into the portal; it is sent whatever the setting says. */
export const ALWAYS_SENT_EMAIL_TYPES: readonly EmailType[] = ['portal.code'];

export const EMAIL_STATUSES = ['captured', 'queued', 'sent', 'failed', 'skipped'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];
