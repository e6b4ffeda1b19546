/**
 * One attempt at one claimed email (M-1, M-2): compose it, then keep it as `captured` without SMTP_URL (or for a test
 * clock's customer, TC-5), or send it with its fixed Message-ID and record the outcome. A failed send is retried on
 * the schedule (emails/retry-schedule.ts); a permanent refusal (5xx) or the last attempt ends `failed` with the error
 * kept.
 */
import type { AppDeps } from '../app-deps.ts';
import { type ComposeContext, composeEmail, type ComposedEmail } from './compose.ts';
import type { EmailRow } from '../emails/repo.ts';
import { recordClaimedEmail as updateClaimedEmail } from '../emails/service.ts';
import { emailRetrySchedule, nextEmailAttemptAt } from './retry-schedule.ts';
import { messageIdHeader } from '../emails/message-id.ts';
import { smtpTransport } from './transport.ts';

/** How long an email waiting for its invoice's PDF waits before it looks again. */
const PDF_WAIT_MS = 1000;

const composedColumns = (c: ComposedEmail) => ({
  to_address: c.to,
  subject: c.subject,
  html: c.html,
  text_body: c.text,
});

function errorText(err: unknown): string {
  const e = err as { message?: string; response?: string };
  return (e.response ?? e.message ?? String(err)).slice(0, 1000);
}

/** An SMTP 5xx is a refusal that repeating will not change (an unknown mailbox); a 4xx or a lost connection may. */
const isPermanent = (err: unknown) => ((err as { responseCode?: number }).responseCode ?? 0) >= 500;

export async function deliverEmail(
  deps: AppDeps,
  email: EmailRow,
  context: ComposeContext,
): Promise<EmailRow['status']> {
  const lease = email.lease_until!;
  const now = () => new Date();
  let composed: ComposedEmail;
  try {
    const composition = await composeEmail(deps, email, context);
    if (composition.kind === 'waiting') {
      await updateClaimedEmail(deps.db, email.id, lease, {
        next_attempt_at: new Date(Date.now() + PDF_WAIT_MS),
        lease_until: null,
      });
      return 'queued';
    }
    composed = composition.email;
  } catch (err) {
    return recordFailure(deps, email, err, null);
  }
  // A test clock's customer's emails are never sent over SMTP (TC-5).
  if (!deps.config.SMTP_URL || email.test_clock_id) {
    await updateClaimedEmail(deps.db, email.id, lease, {
      ...composedColumns(composed),
      status: 'captured',
      next_attempt_at: null,
      lease_until: null,
    });
    return 'captured';
  }
  try {
    const info = await smtpTransport(deps.config.SMTP_URL).sendMail({
      from: deps.config.MAIL_FROM,
      to: composed.to,
      subject: composed.subject,
      html: composed.html,
      text: composed.text,
      attachments: composed.attachments,
      messageId: messageIdHeader(deps.config, email.message_id),
    });
    await updateClaimedEmail(deps.db, email.id, lease, {
      ...composedColumns(composed),
      status: 'sent',
      attempts: email.attempts + 1,
      attempt_log: [
        ...email.attempt_log,
        { at: now().toISOString(), outcome: 'sent', response: String(info.response) },
      ],
      last_error: null,
      sent_at: now(),
      next_attempt_at: null,
      lease_until: null,
    });
    deps.logger.info({ emailId: email.id, type: email.type }, 'email sent');
    return 'sent';
  } catch (err) {
    return recordFailure(deps, email, err, composed);
  }
}

async function recordFailure(
  deps: AppDeps,
  email: EmailRow,
  err: unknown,
  composed: ComposedEmail | null,
): Promise<EmailRow['status']> {
  const attempts = email.attempts + 1;
  const at = new Date();
  const next = isPermanent(err) ? null : nextEmailAttemptAt(emailRetrySchedule(deps.config), attempts, at);
  const error = errorText(err);
  const status = next ? 'queued' : 'failed';
  await updateClaimedEmail(deps.db, email.id, email.lease_until!, {
    ...(composed ? composedColumns(composed) : {}),
    status,
    attempts,
    attempt_log: [...email.attempt_log, { at: at.toISOString(), outcome: 'error', error }],
    last_error: error,
    next_attempt_at: next,
    lease_until: null,
  });
  deps.logger.warn({ emailId: email.id, type: email.type, attempts, error, status }, 'email attempt failed');
  return status;
}
