/**
 * M-2: an emails worker SIGKILLed mid-batch, then a new one. Nothing is lost (every email ends sent and reached the
 * SMTP server), and nothing is sent twice except what was in flight at the kill (claimed, not yet recorded), which
 * arrives again with the Message-ID it had.
 */
import test from 'ava';
import { queueEmails } from '../../src/emails/outbox.ts';
import { portalCodeEmail } from '../../src/emails/portal-code.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { startFakeSmtp, type FakeSmtp } from '../helpers/smtp.ts';
import { killAll, startWorker, waitUntil } from './processes.ts';

let app: TestApp;
let smtp: FakeSmtp;
test.before(async () => {
  // Each message takes the server 30 ms to accept, so a batch is in flight long enough to be killed in.
  smtp = await startFakeSmtp(0, 30);
  app = await startTestApp();
});
test.after.always(async () => {
  await killAll();
  await app?.close();
  await smtp?.close();
});

test('emails worker SIGKILLed mid-batch: all sent, only the in-flight ones twice, with their Message-ID', async (t) => {
  t.timeout(150_000);
  const TOTAL = 400;
  const customer = await insertCustomer(app.db);
  await app.db.transaction((trx) =>
    queueEmails(
      trx,
      Array.from({ length: TOTAL }, (_, i) => portalCodeEmail(customer.id, `code-${i}`, String(100000 + i), 15)),
    ),
  );
  const env = { SMTP_URL: smtp.url, MAIL_FROM: 'Billing <billing@acme.test>', EMAIL_LEASE_SECONDS: '3' };
  const first = await startWorker('emails', app.database.url, env);
  await waitUntil(async () => smtp.received.length >= TOTAL / 5, 60_000, 'a fifth of the emails received');
  await first.kill();
  const inFlight: { message_id: string }[] = await app
    .db('emails')
    .where({ status: 'queued' })
    .whereNotNull('lease_until')
    .select('message_id');
  const sentAtKill = (await app.db('emails').where({ status: 'sent' })).length;
  t.log(`killed with ${sentAtKill} of ${TOTAL} recorded sent, ${inFlight.length} in flight`);
  t.true(sentAtKill < TOTAL, 'killed part-way');

  const second = await startWorker('emails', app.database.url, env);
  const allSent = async () => (await app.db('emails').where({ status: 'sent' })).length === TOTAL;
  await waitUntil(allSent, 60_000, 'every email sent');

  const rows: { message_id: string; attempts: number }[] = await app.db('emails').select('message_id', 'attempts');
  const header = (id: string) => `<${id}@acme.test>`;
  const received = new Map<string, number>();
  for (const mail of smtp.received) received.set(mail.messageId, (received.get(mail.messageId) ?? 0) + 1);
  t.is(rows.length, TOTAL);
  t.true(
    rows.every((r) => received.has(header(r.message_id))),
    'every email reached the server',
  );
  t.is(received.size, TOTAL, 'no Message-ID the service did not write');
  const twice = [...received].filter(([, n]) => n > 1).map(([id]) => id);
  const inFlightIds = new Set(inFlight.map((r) => header(r.message_id)));
  t.true(
    twice.every((id) => inFlightIds.has(id)),
    `sent twice: ${twice.length}, all of them in flight at the kill (${inFlight.length})`,
  );
  t.true(
    [...received.values()].every((n) => n <= 2),
    'none more than twice',
  );
  t.is(await second.stop(), 0);
});
