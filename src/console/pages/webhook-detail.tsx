/**
 * `/admin/webhooks/:id` (console.md operations): the endpoint, its health, its deliveries newest first (filter
 * `status`, paging) each with every attempt, and the actions on it (C-6): edit url/events, enable/disable,
 * rotate the secret (the new one shown once, in the confirmation), delete. Redelivery is `webhooks.tsx`'s.
 */
import { label, statusWords } from '../components/labels.ts';
import { z } from 'zod';
import { auditEntriesOf } from '../../audit/service.ts';
import { keyringOf } from '../../crypto/envelope.ts';
import { uuid } from '../../http/schemas.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { DELIVERY_STATUSES, updateEndpointBody } from '../../webhooks/schema.ts';
import {
  deleteEndpoint,
  endpointHealth,
  getEndpoint,
  listDeliveries,
  rotateEndpointSecret,
  updateEndpoint,
} from '../../webhooks/service.ts';
import { AuditTrail } from '../components/AuditTrail.tsx';
import { Form } from '../components/Form.tsx';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { askFirst, defineAction, definePage } from '../http/route.ts';
import { When } from './customers-parts.tsx';
import {
  EndpointFields,
  endpointFields,
  endpointIdOf,
  HealthSummary,
  LastFailure,
  webhookUrl,
} from './webhooks-parts.tsx';
import { Attempts, ButtonForm } from './webhook-detail-parts.tsx';

const PAGE_SIZE = 50;
export const webhookPage = definePage({
  path: '/admin/webhooks/:id',
  query: z.object({ status: z.enum(DELIVERY_STATUSES).optional(), startingAfter: uuid.optional() }),
  async render({ deps, params, query, viewer, notice, state }) {
    const id = endpointIdOf(params);
    const endpoint = await getEndpoint(deps.db, id);
    const [deliveries, health, audit] = await Promise.all([
      listDeliveries(
        deps.db,
        id,
        { limit: PAGE_SIZE, startingAfter: query.startingAfter, newestFirst: true },
        query.status,
      ),
      endpointHealth(deps.db, [id]),
      auditEntriesOf(deps.db, 'webhook_endpoint', id),
    ]);
    const url = webhookUrl(id);
    const graceUntil =
      endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at > new Date()
        ? endpoint.previous_secret_expires_at
        : null;
    return (
      <Layout title={`Webhook ${endpoint.url}`} viewer={viewer} section="Webhooks" notice={notice}>
        <p class="crumbs">
          <a href="/admin/webhooks">Webhooks</a>
        </p>
        <h1>{endpoint.url}</h1>
        <dl class="props">
          <dt>Status</dt>
          <dd>
            {endpoint.enabled ? 'enabled' : 'disabled (deliveries wait until it is enabled and they are redelivered)'}
          </dd>
          <dt>Events</dt>
          <dd>{endpoint.events.join(', ')}</dd>
          <dt>Last 24 h</dt>
          <dd>
            <HealthSummary health={health.get(id)!} />
          </dd>
          <dt>Last failure</dt>
          <dd>
            <LastFailure health={health.get(id)!} />
          </dd>
          <dt>Secret rotated</dt>
          <dd>{endpoint.secret_rotated_at ? <When value={endpoint.secret_rotated_at} /> : 'never'}</dd>
          {graceUntil ? (
            <>
              <dt>Old secret signs until</dt>
              <dd>
                <When value={graceUntil} />
              </dd>
            </>
          ) : null}
          <dt>Created</dt>
          <dd>
            <When value={endpoint.created_at} />
          </dd>
        </dl>
        <details open={state?.name === 'edit'}>
          <summary>Edit url and events</summary>
          <Form name="edit" action={url} csrf={viewer.csrf} state={state} submit="Save changes">
            <EndpointFields form="edit" state={state} current={endpoint} />
          </Form>
        </details>
        {endpoint.enabled ? (
          <ButtonForm
            name="disable"
            action={`${url}/disable`}
            csrf={viewer.csrf}
            state={state}
            submit="Disable endpoint"
          />
        ) : (
          <ButtonForm
            name="enable"
            action={`${url}/enable`}
            csrf={viewer.csrf}
            state={state}
            submit="Enable endpoint"
          />
        )}
        <details open={state?.name === 'rotate'}>
          <summary>Rotate the signing secret</summary>
          <p class="muted">
            A new secret is generated and shown once. The old one keeps signing beside it for 24 hours (a second{' '}
            <code>webhook-signature</code>); <code>X-Signature</code> uses the new one at once.
          </p>
          <ButtonForm
            name="rotate"
            action={`${url}/rotate-secret`}
            csrf={viewer.csrf}
            state={state}
            submit="Rotate secret"
          />
        </details>
        <details open={state?.name === 'delete'}>
          <summary>Delete the endpoint</summary>
          <p class="muted">Its deliveries and their attempts are deleted with it; pending ones are never sent.</p>
          <ButtonForm
            name="delete"
            action={`${url}/delete`}
            csrf={viewer.csrf}
            state={state}
            submit="Delete endpoint"
          />
        </details>
        <section id="deliveries" class="words" aria-labelledby="deliveries-h">
          <h2 id="deliveries-h">Deliveries</h2>
          <form method="get" action={url} class="filters">
            <p class="field">
              <label for="status">Status</label>
              <select id="status" name="status">
                <option value="">Any</option>
                {DELIVERY_STATUSES.map((s) => (
                  <option value={s} selected={s === query.status}>
                    {label(s)}
                  </option>
                ))}
              </select>
            </p>
            <button type="submit">Filter</button>
          </form>
          <Table
            rows={deliveries.rows}
            empty={query.status ? `No ${query.status} deliveries.` : 'No deliveries yet.'}
            next={nextPageUrl(url, { status: query.status }, deliveries.rows.at(-1)?.id, deliveries.hasMore)}
            columns={[
              { header: 'Created', cell: (d) => <When value={d.created_at} /> },
              {
                header: 'Event',
                cell: (d) => (
                  <>
                    <code class="nowrap">{d.event_type}</code> <span class="muted">{d.event_id}</span>
                  </>
                ),
              },
              { header: 'Status', cell: (d) => <span class="status nowrap">{statusWords(d.status)}</span> },
              { header: 'Next attempt', cell: (d) => <When value={d.next_attempt_at} /> },
              { header: 'Attempts', cell: (d) => <Attempts delivery={d} /> },
              {
                header: 'Action',
                cell: (d) => (
                  <ButtonForm
                    name="redeliver"
                    action={`/admin/webhooks/deliveries/${d.id}/redeliver`}
                    csrf={viewer.csrf}
                    submit="Redeliver"
                  />
                ),
              },
            ]}
          />
        </section>
        <AuditTrail rows={audit} targetType="webhook_endpoint" targetId={id} />
      </Layout>
    );
  },
});

/** `POST /admin/webhooks/:id` (url, events[i]): the API's PUT with those two fields. */
export const editWebhookAction = defineAction({
  path: '/admin/webhooks/:id',
  form: 'edit',
  page: webhookPage,
  async run({ deps, params, form, actor }) {
    const id = endpointIdOf(params);
    await updateEndpoint(
      deps.db,
      id,
      parseOrThrow(updateEndpointBody, endpointFields(form), 'body'),
      deps.config,
      actor,
    );
    return { redirect: webhookUrl(id), notice: 'Endpoint updated.' };
  },
});

/** `POST /admin/webhooks/:id/enable` and `/disable`: the API's PUT with `enabled`. */
const toggleAction = (enabled: boolean) =>
  defineAction({
    path: `/admin/webhooks/:id/${enabled ? 'enable' : 'disable'}`,
    form: enabled ? 'enable' : 'disable',
    page: webhookPage,
    async run({ deps, params, form, actor }) {
      const id = endpointIdOf(params);
      const asked = enabled
        ? undefined
        : askFirst(form, 'A disabled endpoint is sent no events: they wait until it is enabled and redelivered.');
      if (asked) return asked;
      await updateEndpoint(deps.db, id, parseOrThrow(updateEndpointBody, { enabled }, 'body'), deps.config, actor);
      return {
        redirect: webhookUrl(id),
        notice: enabled ? 'Endpoint enabled.' : 'Endpoint disabled: new events are not sent to it.',
      };
    },
  });

/**
 * `POST /admin/webhooks/:id/rotate-secret`: the new secret travels in the one-use confirmation, so the page
 * after the redirect shows it once and a reload does not.
 */
export const rotateWebhookSecretAction = defineAction({
  path: '/admin/webhooks/:id/rotate-secret',
  form: 'rotate',
  page: webhookPage,
  async run({ deps, params, actor }) {
    const id = endpointIdOf(params);
    const { secret } = await rotateEndpointSecret(deps.db, id, keyringOf(deps.config), actor);
    return {
      redirect: webhookUrl(id),
      notice: `Secret rotated. The new signing secret, shown only this once: ${secret}`,
    };
  },
});

/** `POST /admin/webhooks/:id/delete`: the API's DELETE. */
export const deleteWebhookAction = defineAction({
  path: '/admin/webhooks/:id/delete',
  form: 'delete',
  page: webhookPage,
  async run({ deps, params, actor }) {
    const id = endpointIdOf(params);
    const endpoint = await getEndpoint(deps.db, id);
    await deleteEndpoint(deps.db, id, actor);
    return { redirect: '/admin/webhooks', notice: `Endpoint ${endpoint.url} deleted.` };
  },
});

export const webhookDetailRoutes = [
  webhookPage,
  editWebhookAction,
  toggleAction(true),
  toggleAction(false),
  rotateWebhookSecretAction,
  deleteWebhookAction,
];
