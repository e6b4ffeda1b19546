/**
 * SMTP through nodemailer (M-1): one pooled transport per process and SMTP_URL, so a worker keeps its connections
 * open between emails rather than greeting the server for each.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../config.ts';

/** Connections one worker keeps to the SMTP server. */
export const SMTP_CONNECTIONS = 4;

const transports = new Map<string, Transporter>();

export function smtpTransport(url: string): Transporter {
  let transport = transports.get(url);
  if (!transport) {
    transport = nodemailer.createTransport({
      url,
      pool: true,
      maxConnections: SMTP_CONNECTIONS,
      maxMessages: Infinity,
      // Well inside the claim's lease (EMAIL_LEASE_SECONDS, 120 s by default): a hanging server fails the attempt.
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    } as Parameters<typeof nodemailer.createTransport>[0]);
    transports.set(url, transport);
  }
  return transport;
}

export function closeSmtpTransports(): void {
  for (const transport of transports.values()) transport.close();
  transports.clear();
}

/** The domain of MAIL_FROM's address, for Message-IDs. */
export function mailDomain(config: Pick<Config, 'MAIL_FROM'>): string {
  return /@([A-Za-z0-9.-]+)>?\s*$/.exec(config.MAIL_FROM)?.[1] ?? 'localhost';
}

/** The Message-ID header of an email row: fixed when the row is written, so a re-send carries the same one. */
export function messageIdHeader(config: Pick<Config, 'MAIL_FROM'>, messageId: string): string {
  return `<${messageId}@${mailDomain(config)}>`;
}
