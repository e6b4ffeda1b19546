import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';
import type { EmailStatus, EmailType } from '../email-types.ts';

export interface EmailAttempt {
  at: string;
  outcome: 'sent' | 'error';
  error?: string;
  response?: string;
}

export interface EmailRow {
  id: string;
  type: EmailType;
  customer_id: string;
  occasion: string;
  data: Record<string, unknown>;
  status: EmailStatus;
  to_address: string | null;
  subject: string | null;
  html: string | null;
  text_body: string | null;
  message_id: string;
  attempts: number;
  attempt_log: EmailAttempt[];
  last_error: string | null;
  next_attempt_at: Date | null;
  lease_until: Date | null;
  resent_from: string | null;
  /** TC-5: the test clock of the customer (set by the insert's trigger): its emails are kept `captured`. */
  test_clock_id: string | null;
  sent_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * A new email as written: due at once when `due` (the commit's time, whatever clock the change ran on: a sweep as of
 * another day, a test clock), else not due (a skipped one). Its Message-ID is the column's default (a UUIDv7, so the
 * unique index on it is appended to, not written at random places).
 */
export type EmailInsert = Pick<EmailRow, 'type' | 'customer_id' | 'occasion' | 'data' | 'status'> &
  Partial<Pick<EmailRow, 'to_address' | 'subject' | 'html' | 'text_body' | 'resent_from' | 'test_clock_id'>> & {
    due: boolean;
  };

/**
 * Inserts the emails in one statement whatever their number (a sweep batch queues hundreds); a second row for an
 * occasion already emailed is left out (M-3: once per occasion). Answers the ids of the rows written.
 */
export async function insertEmailRows(db: Db, rows: EmailInsert[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const result = await db.raw<{ rows: { id: string }[] }>(
    `insert into emails (type, customer_id, test_clock_id, occasion, data, status, next_attempt_at, to_address,
                         subject, html, text_body, resent_from)
     select v.type, v.customer_id, v.test_clock_id, v.occasion, coalesce(v.data, '{}'), v.status,
            case when v.due then now() end, v.to_address, v.subject, v.html, v.text_body, v.resent_from
       from rows from (jsonb_to_recordset(?::jsonb) as (type text, customer_id uuid, test_clock_id uuid,
            occasion text, data jsonb, status text, due boolean, to_address text, subject text, html text,
            text_body text, resent_from uuid))
            with ordinality as v(type, customer_id, test_clock_id, occasion, data, status, due, to_address, subject,
            html, text_body, resent_from, n)
      order by v.n
     on conflict (type, occasion) where resent_from is null do nothing
     returning id`,
    [JSON.stringify(rows)],
  );
  return result.rows.map((r) => r.id);
}

export function findEmailRow(db: Db, id: string): Promise<EmailRow | undefined> {
  return db('emails').where({ id }).first();
}

/**
 * Claims up to `limit` due emails for `leaseMs` (its end in whole milliseconds: the claim's mark, compared as a JS
 * Date): rows another worker holds are skipped, and a row whose lease ran out
 * (its worker died mid-send) is due again.
 */
export async function claimDueEmailRows(db: Db, limit: number, leaseMs: number): Promise<EmailRow[]> {
  const { rows } = await db.raw<{ rows: EmailRow[] }>(
    `update emails set lease_until = date_trunc('milliseconds', now() + make_interval(secs => ?)), updated_at = now()
      where id in (
        select id from emails
         where status = 'queued' and next_attempt_at <= now() and (lease_until is null or lease_until < now())
         order by next_attempt_at limit ? for update skip locked)
      returning *`,
    [leaseMs / 1000, limit],
  );
  return rows;
}

/** Writes what an attempt (or a postponement) changed, only while this worker still holds the row's lease. */
export async function updateClaimedEmail(
  db: Db,
  id: string,
  lease: Date,
  changes: Partial<Omit<EmailRow, 'attempt_log' | 'data'>> & { attempt_log?: EmailAttempt[] },
): Promise<boolean> {
  const values = {
    ...changes,
    ...(changes.attempt_log ? { attempt_log: JSON.stringify(changes.attempt_log) } : {}),
    updated_at: db.fn.now(),
  };
  const count = await db('emails').where({ id, lease_until: lease }).update(values);
  return count > 0;
}

export interface EmailListFilters {
  customerId?: string | undefined;
  type?: EmailType | undefined;
  status?: EmailStatus | undefined;
}

const LIST_COLUMNS = [
  'id',
  'type',
  'customer_id',
  'occasion',
  'status',
  'to_address',
  'subject',
  'message_id',
  'attempts',
  'last_error',
  'next_attempt_at',
  'resent_from',
  'sent_at',
  'created_at',
  'updated_at',
];

export type EmailSummaryRow = Omit<EmailRow, 'data' | 'html' | 'text_body' | 'attempt_log' | 'lease_until'>;

export function listEmailRows(db: Db, page: PageQuery, filters: EmailListFilters): Promise<Page<EmailSummaryRow>> {
  const query = db('emails').select(LIST_COLUMNS.map((c) => `emails.${c}`));
  if (filters.customerId) query.where('emails.customer_id', filters.customerId);
  if (filters.type) query.where('emails.type', filters.type);
  if (filters.status) query.where('emails.status', filters.status);
  return paginate<EmailSummaryRow>(query, 'emails', page);
}

/** Occasions of `type` already emailed among `occasions` (a sweep's reminders are written once each). */
export async function emailedOccasions(db: Db, type: EmailType, occasions: string[]): Promise<Set<string>> {
  if (occasions.length === 0) return new Set();
  const rows: { occasion: string }[] = await db('emails')
    .select('occasion')
    .where({ type })
    .whereIn('occasion', occasions)
    .whereNull('resent_from');
  return new Set(rows.map((r) => r.occasion));
}
