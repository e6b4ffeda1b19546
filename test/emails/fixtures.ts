import { closeSharedBrowser } from '../../src/invoices/pdf/shared-browser.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { adminCtx, type Ctx } from '../payments/fixtures.ts';
import { startFakeSmtp, type FakeSmtp, type ReceivedMail } from '../helpers/smtp.ts';

export interface EmailsWorld {
  app: TestApp;
  smtp: FakeSmtp;
  c: Ctx;
  close(): Promise<void>;
}

/**
 * The app with its emails and pdf workers running, sending to a loopback SMTP server, with retries in fractions
 * of a second (EMAIL_RETRY_SCHEDULE_SECONDS) so a test sees a whole schedule.
 */
export async function startEmailsWorld(env: Record<string, string> = {}): Promise<EmailsWorld> {
  const smtp = await startFakeSmtp();
  const app = await startTestApp({
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Acme Billing <billing@acme.test>',
    PUBLIC_BASE_URL: 'https://billing.acme.test',
    EMAIL_RETRY_SCHEDULE_SECONDS: '0.2,0.2,0.2,0.2,0.2',
    ...env,
  });
  const stopWorkers = await registerWorkers(app.boss, app.deps, ['emails', 'pdf'], jobHandlers);
  const c = await adminCtx(app);
  return {
    app,
    smtp,
    c,
    async close() {
      await stopWorkers();
      // The queue first (its pdf jobs end), then the browser they render in.
      await app.close();
      await closeSharedBrowser();
      await smtp.close();
    },
  };
}

/** The messages received whose subject matches, once at least `count` arrived. */
export function mailsMatching(smtp: FakeSmtp, subject: RegExp | string, count = 1): Promise<ReceivedMail[]> {
  const matches = (m: ReceivedMail) =>
    typeof subject === 'string' ? (m.parsed.subject ?? '').includes(subject) : subject.test(m.parsed.subject ?? '');
  return waitFor(
    () => smtp.received.filter(matches),
    (found) => found.length >= count,
  );
}

/** The email rows of a type, once `done` holds for them. */
export function emailRows(app: TestApp, where: Record<string, unknown>, done: (rows: EmailRowLike[]) => boolean) {
  return waitFor(async () => (await app.db('emails').where(where).orderBy('created_at')) as EmailRowLike[], done);
}

export interface EmailRowLike {
  id: string;
  type: string;
  status: string;
  attempts: number;
  last_error: string | null;
  message_id: string;
  customer_id: string;
  attempt_log: { outcome: string; error?: string }[];
}
