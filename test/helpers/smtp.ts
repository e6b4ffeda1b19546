/**
 * A real SMTP server on loopback (smtp-server) that keeps every message it accepts, parsed by mailparser: the
 * outside world of the emails worker. `refuse(n)` answers 451 (try again later) to the next n messages.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  parsed: ParsedMail;
  to: string[];
  messageId: string;
  raw: Buffer;
}

export interface FakeSmtp {
  url: string;
  port: number;
  received: ReceivedMail[];
  /** Refuses the next `count` messages with a 451. */
  refuse(count: number): void;
  /** How many messages were refused. */
  refused(): number;
  close(): Promise<void>;
}

/** `delayMs`: how long the server takes to accept each message (an email in flight for that long). */
export async function startFakeSmtp(port = 0, delayMs = 0): Promise<FakeSmtp> {
  const received: ReceivedMail[] = [];
  let toRefuse = 0;
  let refusedCount = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    size: 20 * 1024 * 1024,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (toRefuse > 0) {
          toRefuse--;
          refusedCount++;
          const err = new Error('Mailbox busy, try again later') as Error & { responseCode: number };
          err.responseCode = 451;
          callback(err);
          return;
        }
        const raw = Buffer.concat(chunks);
        const accepted = delayMs > 0 ? new Promise((r) => setTimeout(r, delayMs)) : Promise.resolve();
        accepted
          .then(() => simpleParser(raw))
          .then(
            (parsed) => {
              received.push({
                parsed,
                raw,
                to: session.envelope.rcptTo.map((r) => r.address),
                messageId: parsed.messageId ?? '',
              });
              callback();
            },
            (err: Error) => callback(err),
          );
      });
    },
  });
  // A client killed mid-message (the kill test) resets its connection: the server's error, not the test's.
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${actual}`,
    port: actual,
    received,
    refuse(count) {
      toRefuse = count;
    },
    refused: () => refusedCount,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
