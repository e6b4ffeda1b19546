/**
 * `/admin/emails?customerId=&type=&status=` (M-5): every email newest first; `/admin/emails/:id` one email with its
 * recipient, attempts, last error, text part and its HTML part in a sandboxed frame (emails-preview.ts serves it
 * with a CSP `sandbox` of its own: no script, another origin), and Resend. The section is Customers (C-3's
 * navigation is fixed): the customer page lists their emails and links here, and so does Settings.
 */
import { statusWords } from '../components/labels.ts';
import { ChoiceFilter } from './list-helpers.tsx';
import type { Context } from 'koa';
import { z } from 'zod';
import { auditEntriesOf } from '../../audit/service.ts';
import { listEmailsQuery } from '../../emails/schema.ts';
import { getEmail, listEmails, resendEmail } from '../../emails/service.ts';
import { messageIdHeader } from '../../emails/message-id.ts';
import { EMAIL_STATUSES, EMAIL_TYPES } from '../../email-types.ts';
import { uuid } from '../../http/schemas.ts';
import { AuditTrail } from '../components/AuditTrail.tsx';
import { ErrorBox, Form, type FormState } from '../components/Form.tsx';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import type { EmailSummaryRow } from '../../emails/repo.ts';
import { defineAction, definePage } from '../http/route.ts';
import { uuidParam } from '../http/params.ts';
import { When } from './customers-parts.tsx';

const PAGE_SIZE = 50;
export const EMAILS_LIST = '/admin/emails';
export const emailUrl = (id: string) => `${EMAILS_LIST}/${id}`;
const emailIdOf = (params: Record<string, string>) => uuidParam(params.id, 'Email');

const filtersQuery = z.object({
  customerId: listEmailsQuery.shape.customerId,
  type: listEmailsQuery.shape.type,
  status: listEmailsQuery.shape.status,
  startingAfter: uuid.optional(),
});

/** The emails table, on this page and on a customer's. */
export function EmailsTable({ rows, empty, next }: { rows: EmailSummaryRow[]; empty: string; next?: string }) {
  return (
    <Table
      rows={rows}
      empty={empty}
      next={next}
      stack
      columns={[
        {
          header: 'Created',
          cell: (e) => (
            <a href={emailUrl(e.id)}>
              <When value={e.created_at} />
            </a>
          ),
        },
        { header: 'Type', cell: (e) => <code>{e.type}</code> },
        { header: 'To', cell: (e) => e.to_address ?? '—' },
        { header: 'Subject', cell: (e) => e.subject ?? '—' },
        {
          header: 'Status',
          cell: (e) => <span class={`status nowrap status-${e.status}`}>{statusWords(e.status)}</span>,
        },
        { header: 'Attempts', numeric: true, cell: (e) => e.attempts },
        { header: 'Last error', cell: (e) => e.last_error ?? '' },
      ]}
    />
  );
}

/** The customer page's Emails (M-5): their newest ten, and the Emails page filtered to them. */
export function CustomerEmailsSection({
  rows,
  customerId,
  more,
}: {
  rows: EmailSummaryRow[];
  customerId: string;
  more: boolean;
}) {
  return (
    <section id="emails" class="words" aria-labelledby="emails-h">
      <h2 id="emails-h">Emails</h2>
      <EmailsTable rows={rows} empty="No emails." />
      <p>
        <a href={`${EMAILS_LIST}?customerId=${customerId}`}>{more ? 'All emails' : 'Emails page'}</a>
      </p>
    </section>
  );
}

export const emailsPage = definePage({
  path: EMAILS_LIST,
  query: filtersQuery,
  async render({ deps, query, viewer, notice }) {
    const filters = { customerId: query.customerId, type: query.type, status: query.status };
    const page = { limit: PAGE_SIZE, startingAfter: query.startingAfter, newestFirst: true };
    const { rows, hasMore } = await listEmails(deps.db, page, filters);
    const filtered = Boolean(query.customerId || query.type || query.status);
    return (
      <Layout title="Emails" viewer={viewer} section="Customers" notice={notice}>
        <h1>Emails</h1>
        {deps.config.SMTP_URL ? null : (
          <p class="hint">
            No SMTP server is set (SMTP_URL): every email is composed and kept here as <code>captured</code>, not sent.
          </p>
        )}
        <form method="get" action={EMAILS_LIST} class="filters">
          {query.customerId && <input type="hidden" name="customerId" value={query.customerId} />}
          <ChoiceFilter
            id="type"
            name="type"
            title="Type"
            options={EMAIL_TYPES}
            value={query.type}
            words={statusWords}
          />
          <ChoiceFilter
            id="status"
            name="status"
            title="Status"
            options={EMAIL_STATUSES}
            value={query.status}
            words={statusWords}
          />
          <button type="submit">Filter</button>
        </form>
        <div class="words">
          <EmailsTable
            rows={rows}
            empty={filtered ? 'No emails match these filters.' : 'No emails yet.'}
            next={nextPageUrl(EMAILS_LIST, filters, rows.at(-1)?.id, hasMore)}
          />
        </div>
      </Layout>
    );
  },
});

/** The email page lets its own frame in: the preview's address on this origin, nothing else. */
function allowPreviewFrame(ctx: Context): void {
  const policy = String(ctx.response.get('Content-Security-Policy'));
  ctx.set('Content-Security-Policy', policy.replace("default-src 'none';", "default-src 'none'; frame-src 'self';"));
}

function ResendForm({ id, csrf, state }: { id: string; csrf: string; state?: FormState }) {
  return (
    <Form name="resend" action={`${emailUrl(id)}/resend`} csrf={csrf} state={state} submit="Resend">
      {null}
    </Form>
  );
}

export const emailPage = definePage({
  path: `${EMAILS_LIST}/:id`,
  async render({ deps, ctx, params, viewer, notice, state }) {
    const email = await getEmail(deps.db, emailIdOf(params));
    const audit = await auditEntriesOf(deps.db, 'email', email.id);
    allowPreviewFrame(ctx);
    return (
      <Layout title={`Email ${email.subject ?? email.type}`} viewer={viewer} section="Customers" notice={notice}>
        <p class="crumbs">
          <a href={EMAILS_LIST}>Emails</a>
        </p>
        <h1>{email.subject ?? email.type}</h1>
        {state ? <ErrorBox state={state} /> : null}
        <dl class="props">
          <dt>Type</dt>
          <dd>
            <code>{email.type}</code>
          </dd>
          <dt>Status</dt>
          <dd>{email.status}</dd>
          <dt>To</dt>
          <dd>{email.to_address ?? '—'}</dd>
          <dt>Customer</dt>
          <dd>
            <a href={`/admin/customers/${email.customer_id}`}>{email.customer_id}</a>
          </dd>
          <dt>Message-ID</dt>
          <dd>
            <code>{messageIdHeader(deps.config, email.message_id)}</code>
          </dd>
          <dt>Attempts</dt>
          <dd>{email.attempts}</dd>
          <dt>Last error</dt>
          <dd>{email.last_error ?? '—'}</dd>
          <dt>Next attempt</dt>
          <dd>{email.next_attempt_at ? <When value={email.next_attempt_at} /> : '—'}</dd>
          <dt>Sent</dt>
          <dd>{email.sent_at ? <When value={email.sent_at} /> : '—'}</dd>
          {email.resent_from && (
            <>
              <dt>Resend of</dt>
              <dd>
                <a href={emailUrl(email.resent_from)}>{email.resent_from}</a>
              </dd>
            </>
          )}
        </dl>
        <ResendForm id={email.id} csrf={viewer.csrf} state={state} />
        {email.attempt_log.length > 0 && (
          <>
            <h2>Attempts</h2>
            <ol class="words">
              {email.attempt_log.map((a) => (
                <li key={a.at}>
                  <When value={new Date(a.at)} />{' '}
                  {a.outcome === 'sent' ? `sent: ${a.response ?? ''}` : `error: ${a.error ?? ''}`}
                </li>
              ))}
            </ol>
          </>
        )}
        <h2>Text</h2>
        <pre class="payload email-text">{email.text_body ?? 'Not composed yet.'}</pre>
        <h2>HTML</h2>
        {email.html ? (
          <iframe
            class="email-preview"
            title="The email's HTML part"
            src={`${emailUrl(email.id)}/html`}
            sandbox=""
            referrerpolicy="no-referrer"
          />
        ) : (
          <p>Not composed yet.</p>
        )}
        <AuditTrail rows={audit} targetType="email" targetId={email.id} />
      </Layout>
    );
  },
});

/** `POST /admin/emails/:id/resend`: the API's Resend (a new email, the same content). */
export const resendEmailAction = defineAction({
  path: `${EMAILS_LIST}/:id/resend`,
  form: 'resend',
  page: emailPage,
  async run({ deps, params, actor }) {
    const copy = await resendEmail(deps.db, emailIdOf(params), actor);
    return { redirect: emailUrl(copy.id), notice: 'Email queued again as a new email.' };
  },
});

export const emailRoutes = [emailsPage, emailPage, resendEmailAction];
