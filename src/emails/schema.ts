import { z } from 'zod';
import type { Config } from '../config.ts';
import { messageIdHeader } from './message-id.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import { iso, pageQuery, uuid } from '../http/schemas.ts';
import type { EmailRow, EmailSummaryRow } from './repo.ts';
import { EMAIL_STATUSES, EMAIL_TYPES } from '../email-types.ts';

export const listEmailsQuery = pageQuery.extend({
  customerId: uuid.optional(),
  type: z.enum(EMAIL_TYPES, { error: `must be one of ${EMAIL_TYPES.join(', ')}` }).optional(),
  status: z.enum(EMAIL_STATUSES, { error: `must be one of ${EMAIL_STATUSES.join(', ')}` }).optional(),
});

const EXAMPLE_EMAIL_ID = '0e8c5d2a-4b7f-4c19-9a3e-1f2d3c4b5a69';

const summaryExample = {
  id: EXAMPLE_EMAIL_ID,
  type: 'invoice.issued',
  customerId: EXAMPLE_ID.customer,
  status: 'sent',
  to: 'ada@example.com',
  subject: 'Invoice INV-2026-000042 from Acme Billing Ltd',
  messageId: '<5b0f3c1e-2d4a-4e8b-9c7d-6a5b4c3d2e1f@acme.example>',
  attempts: 1,
  lastError: null,
  nextAttemptAt: null,
  resentFrom: null,
  sentAt: '2026-01-05T09:30:02.000Z',
  createdAt: '2026-01-05T09:30:00.000Z',
};

const summaryShape = {
  id: z.uuid(),
  type: z.enum(EMAIL_TYPES),
  customerId: z.uuid(),
  status: z.enum(EMAIL_STATUSES),
  to: z.string().nullable().meta({ description: 'The recipient, once composed' }),
  subject: z.string().nullable(),
  messageId: z.string().meta({ description: 'The Message-ID header, the same on every attempt' }),
  attempts: z.number().int(),
  lastError: z.string().nullable(),
  nextAttemptAt: z.string().nullable(),
  resentFrom: z.uuid().nullable(),
  sentAt: z.string().nullable(),
  createdAt: z.string(),
};

export const emailSummaryResponse = z.object(summaryShape).meta({ examples: [summaryExample] });

export const emailResponse = z
  .object({
    ...summaryShape,
    text: z.string().nullable().meta({ description: 'The plain-text part, once composed' }),
    html: z.string().nullable().meta({ description: 'The HTML part, once composed' }),
    attemptLog: z.array(
      z.object({
        at: z.string(),
        outcome: z.enum(['sent', 'error']),
        error: z.string().optional(),
        response: z.string().optional(),
      }),
    ),
  })
  .meta({
    examples: [
      {
        ...summaryExample,
        text: 'Invoice INV-2026-000042\n\nHello Ada, here is your invoice from Acme Billing Ltd.\n',
        html: '<!doctype html><html lang="en">…</html>',
        attemptLog: [{ at: '2026-01-05T09:30:02.000Z', outcome: 'sent', response: '250 OK: queued' }],
      },
    ],
  });

export function serialiseEmailSummary(row: EmailSummaryRow, config: Pick<Config, 'MAIL_FROM'>) {
  return {
    id: row.id,
    type: row.type,
    customerId: row.customer_id,
    status: row.status,
    to: row.to_address,
    subject: row.subject,
    messageId: messageIdHeader(config, row.message_id),
    attempts: row.attempts,
    lastError: row.last_error,
    nextAttemptAt: iso(row.next_attempt_at),
    resentFrom: row.resent_from,
    sentAt: iso(row.sent_at),
    createdAt: iso(row.created_at)!,
  };
}

export function serialiseEmail(row: EmailRow, config: Pick<Config, 'MAIL_FROM'>) {
  return {
    ...serialiseEmailSummary(row, config),
    text: row.text_body,
    html: row.html,
    attemptLog: row.attempt_log,
  };
}
