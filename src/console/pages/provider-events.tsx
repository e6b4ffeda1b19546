/**
 * `/admin/provider-events?status=&provider=` (console.md operations): inbound provider events newest first,
 * failed ones with their error, each failed one with its replay form; `/admin/provider-events/:id` shows one
 * event with its payload and audit entries. Linked from the webhooks page (the Webhooks section).
 */
import { label, statusWords } from '../components/labels.ts';
import { z } from 'zod';
import { auditEntriesOf } from '../../audit/service.ts';
import { uuid } from '../../http/schemas.ts';
import { listProviderEventsQuery } from '../../provider-events/schema.ts';
import { getProviderEvent, listProviderEvents, replayProviderEvent } from '../../provider-events/service.ts';
import { PROVIDERS } from '../../provider-events/verify.ts';
import { AuditTrail } from '../components/AuditTrail.tsx';
import { ErrorBox, Form, type FormState } from '../components/Form.tsx';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { defineAction, definePage } from '../http/route.ts';
import { Nowrap, When } from './customers-parts.tsx';
import { uuidParam } from '../http/params.ts';

const PAGE_SIZE = 50;
const LIST = '/admin/provider-events';
const STATUSES = listProviderEventsQuery.shape.status.unwrap().options;

type ProviderEvent = Awaited<ReturnType<typeof getProviderEvent>>;

const eventUrl = (id: string) => `${LIST}/${id}`;
const eventIdOf = (params: Record<string, string>) => uuidParam(params.id, 'Provider event');

/** The replay form of a failed event (an applied one is never applied twice, so it gets none). */
function ReplayForm({ event, csrf, state }: { event: ProviderEvent; csrf: string; state?: FormState }) {
  if (event.status !== 'failed') return null;
  return (
    <Form name="replay" action={`${eventUrl(event.id)}/replay`} csrf={csrf} state={state} submit="Replay">
      {null}
    </Form>
  );
}

const filtersQuery = z.object({
  status: z.enum(STATUSES).optional(),
  provider: z.enum(PROVIDERS).optional(),
  startingAfter: uuid.optional(),
});

export const providerEventsPage = definePage({
  path: LIST,
  query: filtersQuery,
  async render({ deps, query, viewer, notice, state }) {
    const filters = { status: query.status, provider: query.provider };
    const { rows, hasMore } = await listProviderEvents(
      deps.db,
      { limit: PAGE_SIZE, startingAfter: query.startingAfter, newestFirst: true },
      filters,
    );
    return (
      <Layout title="Provider events" viewer={viewer} section="Webhooks" notice={notice}>
        <p class="crumbs">
          <a href="/admin/webhooks">Webhooks</a>
        </p>
        <h1>Provider events</h1>
        {state ? <ErrorBox state={state} /> : null}
        <form method="get" action={LIST} class="filters">
          <p class="field">
            <label for="status">Status</label>
            <select id="status" name="status">
              <option value="">Any</option>
              {STATUSES.map((s) => (
                <option value={s} selected={s === query.status}>
                  {label(s)}
                </option>
              ))}
            </select>
          </p>
          <p class="field">
            <label for="provider">Provider</label>
            <select id="provider" name="provider">
              <option value="">Any</option>
              {PROVIDERS.map((p) => (
                <option value={p} selected={p === query.provider}>
                  {label(p)}
                </option>
              ))}
            </select>
          </p>
          <button type="submit">Filter</button>
        </form>
        <div class="words">
          <Table
            rows={rows}
            empty={
              query.status || query.provider ? 'No provider events match these filters.' : 'No provider events yet.'
            }
            next={nextPageUrl(LIST, filters, rows.at(-1)?.id, hasMore)}
            columns={[
              {
                header: 'Received',
                cell: (e) => (
                  <a href={eventUrl(e.id)}>
                    <When value={e.created_at} />
                  </a>
                ),
              },
              { header: 'Provider', cell: (e) => <Nowrap>{e.provider}</Nowrap> },
              { header: 'Type', cell: (e) => <code>{e.event_type}</code> },
              { header: 'Status', cell: (e) => <span class="status nowrap">{statusWords(e.status)}</span> },
              { header: 'Attempts', numeric: true, cell: (e) => e.attempts },
              { header: 'Error', cell: (e) => e.failure_reason ?? '' },
              { header: 'Action', cell: (e) => <ReplayForm event={e} csrf={viewer.csrf} /> },
            ]}
          />
        </div>
      </Layout>
    );
  },
});

export const providerEventPage = definePage({
  path: `${LIST}/:id`,
  async render({ deps, params, viewer, notice, state }) {
    const event = await getProviderEvent(deps.db, eventIdOf(params));
    const audit = await auditEntriesOf(deps.db, 'provider_event', event.id);
    return (
      <Layout title={`Provider event ${event.event_type}`} viewer={viewer} section="Webhooks" notice={notice}>
        <p class="crumbs">
          <a href="/admin/webhooks">Webhooks</a> · <a href={LIST}>Provider events</a>
        </p>
        <h1>{`${event.provider} ${event.event_type}`}</h1>
        <dl class="props">
          <dt>Status</dt>
          <dd>{event.status}</dd>
          <dt>Error</dt>
          <dd>{event.failure_reason ?? '—'}</dd>
          <dt>Provider's event id</dt>
          <dd>
            <code>{event.event_id}</code>
          </dd>
          <dt>Attempts</dt>
          <dd>{event.attempts}</dd>
          <dt>Occurred</dt>
          <dd>{event.occurred_at ? <When value={event.occurred_at} /> : '—'}</dd>
          <dt>Received</dt>
          <dd>
            <When value={event.created_at} />
          </dd>
          <dt>Processed</dt>
          <dd>{event.processed_at ? <When value={event.processed_at} /> : '—'}</dd>
        </dl>
        <ReplayForm event={event} csrf={viewer.csrf} state={state} />
        <h2>Payload</h2>
        <pre class="payload">{JSON.stringify(event.payload, null, 2)}</pre>
        <AuditTrail rows={audit} targetType="provider_event" targetId={event.id} />
      </Layout>
    );
  },
});

/** `POST /admin/provider-events/:id/replay`: the API's replay (queued again; applied once however often). */
export const replayProviderEventAction = defineAction({
  path: `${LIST}/:id/replay`,
  form: 'replay',
  page: providerEventPage,
  async run({ deps, params, actor }) {
    const event = await replayProviderEvent(deps.db, eventIdOf(params), actor);
    const notice =
      event.status === 'received'
        ? 'Event queued again: it is applied in a moment.'
        : `The event was already ${event.status}: nothing to replay.`;
    return { redirect: eventUrl(event.id), notice };
  },
});

export const providerEventRoutes = [providerEventsPage, providerEventPage, replayProviderEventAction];
