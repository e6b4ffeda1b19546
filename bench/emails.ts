/**
 * Customer emails and the hosted invoice page (issue 36).
 *
 * 1. Emails/s: a backlog of emails written to the outbox, drained by one `workers/emails.ts` process to an SMTP
 *    server on loopback (smtp-server, in this process), timed from the first message the server accepts to the last;
 *    beside the raw ceiling measured in the same run: nodemailer in this process sending the same messages (as the
 *    worker composed them) over the same pooled connections, as many in flight as the worker claims. Aim: ratio >= 0.5.
 * 2. The hosted invoice page: GET /i/<token> at 32 connections against a web process (`npm run web`); p50/p99.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { SYSTEM_ACTOR } from '../src/actor.ts';
import { loadConfig } from '../src/config.ts';
import { createKnex } from '../src/db/knex.ts';
import { queueEmails } from '../src/emails/outbox.ts';
import { portalCodeEmail } from '../src/emails/portal-code.ts';
import { hostedUrlOf } from '../src/invoices/hosted-links.ts';
import { createInvoice } from '../src/invoices/service.ts';
import { EMAIL_DISPATCH_LIMITS } from '../src/mailer/dispatcher.ts';
import { SMTP_CONNECTIONS } from '../src/mailer/transport.ts';
import { roleArgs } from '../test/faults/processes.ts';
import { measure, onCleanup, problemOf, startBenchDatabase, startChildServer, runBenchScript } from './harness.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (message: string) => console.error(`[bench emails] ${message}`);
const COUNT = Number(process.env.EMAIL_BENCH_COUNT ?? 2000);
const FROM = 'Bench Billing <billing@bench.example>';

interface Sink {
  url: string;
  /** When each message was accepted (ms), in order. */
  accepted: number[];
  close(): Promise<void>;
}

async function startSink(): Promise<Sink> {
  const accepted: number[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        accepted.push(performance.now());
        callback();
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  return { url: `smtp://127.0.0.1:${port}`, accepted, close: () => new Promise((r) => server.close(() => r())) };
}

async function waitUntil(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The ceiling: the same composed messages sent by nodemailer from this process, `inFlight` at a time. */
async function rawSends(url: string, messages: SendMailOptions[], inFlight: number): Promise<number> {
  const transport = nodemailer.createTransport({
    url,
    pool: true,
    maxConnections: SMTP_CONNECTIONS,
    maxMessages: Infinity,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < messages.length) await transport.sendMail(messages[next++]!);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  transport.close();
  return messages.length / seconds;
}

async function emailsPerSecond(databaseUrl: string, knex: ReturnType<typeof createKnex>) {
  const sink = await startSink();
  onCleanup(() => sink.close());
  const [customer] = await knex('customers')
    .insert({ name: 'Bench Customer', email: 'bench@customer.example' })
    .returning('id');
  say(`writing ${COUNT} emails to the outbox (no worker running)`);
  for (let i = 0; i < COUNT; i += 500) {
    const batch = Array.from({ length: Math.min(500, COUNT - i) }, (_, k) =>
      portalCodeEmail(customer.id, `bench-${i + k}`, String(100000 + i + k), 15),
    );
    await knex.transaction((trx) => queueEmails(trx, batch));
  }
  say('starting one emails worker (workers/emails.ts)');
  const worker = spawn(process.execPath, roleArgs('worker:emails'), {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', SMTP_URL: sink.url, MAIL_FROM: FROM },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  onCleanup(() => {
    if (worker.exitCode === null) worker.kill('SIGTERM');
  });
  await waitUntil(() => sink.accepted.length >= COUNT, 300_000, 'the backlog sent');
  const drain = COUNT / ((sink.accepted.at(-1)! - sink.accepted[0]!) / 1000);
  // The server accepts a message before the worker records it: the last ones are recorded a moment later.
  for (let sent = 0; sent < COUNT; await new Promise((r) => setTimeout(r, 50)))
    sent = Number((await knex('emails').where({ status: 'sent' }).count<{ n: string }>('* as n').first())!.n);
  worker.kill('SIGTERM');

  const rows: { to_address: string; subject: string; html: string; text_body: string; message_id: string }[] =
    await knex('emails').select('to_address', 'subject', 'html', 'text_body', 'message_id');
  const messages = rows.map((r) => ({
    from: FROM,
    to: r.to_address,
    subject: r.subject,
    html: r.html,
    text: r.text_body,
    messageId: `<${r.message_id}@bench.example>`,
  }));
  say('raw ceiling: nodemailer sending the same messages from this process');
  await rawSends(sink.url, messages.slice(0, 200), EMAIL_DISPATCH_LIMITS.batch);
  const ceiling = await rawSends(sink.url, messages, EMAIL_DISPATCH_LIMITS.batch);
  return { drain, ceiling };
}

async function hostedPage(databaseUrl: string, knex: ReturnType<typeof createKnex>) {
  const config = loadConfig({ DATABASE_URL: databaseUrl, NODE_ENV: 'development' });
  await knex('settings')
    .insert({ key: 'invoices.hosted_rate_limit_per_minute', value: JSON.stringify(1_000_000) })
    .onConflict('key')
    .merge();
  const [customer] = await knex('customers')
    .insert({ name: 'Hosted Page Customer', email: 'hosted@customer.example' })
    .returning('id');
  const { invoice } = await createInvoice(
    knex,
    {
      customerId: customer.id,
      currency: 'USD',
      status: 'issued',
      lineItems: [
        { description: 'Annual plan', quantity: 1, unitPrice: '1200.00' },
        { description: 'Onboarding', quantity: 2, unitPrice: '150.00' },
      ],
    },
    SYSTEM_ACTOR,
  );
  const url = await hostedUrlOf(knex, config, invoice);
  const hostedPath = new URL(url!).pathname;
  say('starting a web process (npm run web)');
  const web = await startChildServer(
    'web',
    roleArgs('web'),
    { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    '/readyz',
  );
  const measured = await measure(
    web.baseUrl,
    { method: 'GET', next: () => ({ path: hostedPath }), accept: (body) => body.includes(invoice.invoice_number) },
    { seconds: 10, warmupSeconds: 3, connections: 32 },
  );
  await web.stop();
  return measured;
}

async function main(): Promise<void> {
  say('starting PostgreSQL and migrating a bench database');
  const databaseUrl = await startBenchDatabase();
  const knex = createKnex(databaseUrl, 8);
  onCleanup(() => knex.destroy());
  const { drain, ceiling } = await emailsPerSecond(databaseUrl, knex);
  const page = await hostedPage(databaseUrl, knex);
  const problem = problemOf(page);
  console.log('');
  console.log(
    `customer emails: ${COUNT} emails, one worker claiming ${EMAIL_DISPATCH_LIMITS.batch} at a time over ` +
      `${SMTP_CONNECTIONS} SMTP connections; ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}; ` +
      `Node ${process.version}`,
  );
  console.log(
    `emails/s by one worker ${drain.toFixed(0)}   raw nodemailer ceiling ${ceiling.toFixed(0)}/s   ratio ` +
      `${(drain / ceiling).toFixed(2)} (aim >= 0.5)`,
  );
  console.log(
    `hosted invoice page GET /i/<token>, 32 connections: ${page.requestsPerSecond.toFixed(0)} req/s   ` +
      `p50 ${page.p50Ms} ms   p99 ${page.p99Ms} ms${problem ? `   NOT CLEAN: ${problem}` : ''}`,
  );
  if (drain / ceiling < 0.5) throw new Error('emails/s below half the raw ceiling');
  if (problem) throw new Error(`hosted page load: ${problem}`);
}

await runBenchScript(import.meta.url, 'EMAILS', main);
