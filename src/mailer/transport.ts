/**
 * SMTP through nodemailer (M-1): one pooled transport per process and SMTP_URL, so a worker keeps its connections
 * open between emails rather than greeting the server for each.
 */
import nodemailer, { type Transporter } from 'nodemailer';

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
