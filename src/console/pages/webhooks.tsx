/**
 * `/admin/webhooks` (console.md operations): the outbound endpoints newest first, each with its health over the
 * last 24 hours (from the deliveries in the database, one statement for the page), and the create form.
 */
import { z } from 'zod';
import { uuid } from '../../http/schemas.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { createEndpointBody } from '../../webhooks/schema.ts';
import { createEndpoint, endpointHealth, listEndpoints, retryDelivery } from '../../webhooks/service.ts';
import { Form } from '../components/Form.tsx';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { defineAction, definePage } from '../http/route.ts';
import { Nowrap, When } from './customers-parts.tsx';
import { uuidParam } from '../http/params.ts';
import { providerEventRoutes } from './provider-events.tsx';
import { webhookDetailRoutes } from './webhook-detail.tsx';
import {
  EndpointFields,
  endpointFields,
  HealthSummary,
  LastFailure,
  OtherFormError,
  webhookUrl,
} from './webhooks-parts.tsx';

const PAGE_SIZE = 50;

export const webhooksPage = definePage({
  path: '/admin/webhooks',
  query: z.object({ startingAfter: uuid.optional() }),
  async render({ deps, query, viewer, notice, state }) {
    const { rows, hasMore } = await listEndpoints(deps.db, {
      limit: PAGE_SIZE,
      startingAfter: query.startingAfter,
      newestFirst: true,
    });
    const health = await endpointHealth(
      deps.db,
      rows.map((e) => e.id),
    );
    return (
      <Layout title="Webhooks" viewer={viewer} section="Webhooks" notice={notice}>
        <h1>Webhooks</h1>
        <OtherFormError state={state} except={['create']} />
        <p class="more">
          <a href="/admin/provider-events">Inbound provider events</a> ·{' '}
          <a href="/admin/provider-events?status=failed">failed ones</a>
        </p>
        <details open={state?.name === 'create'}>
          <summary>New endpoint</summary>
          <Form name="create" action="/admin/webhooks" csrf={viewer.csrf} state={state} submit="Create endpoint">
            <EndpointFields form="create" state={state} />
          </Form>
        </details>
        <h2>Endpoints</h2>
        <div class="words">
          <Table
            rows={rows}
            empty="No webhook endpoints yet."
            next={nextPageUrl('/admin/webhooks', {}, rows.at(-1)?.id, hasMore)}
            columns={[
              { header: 'URL', cell: (e) => <a href={webhookUrl(e.id)}>{e.url}</a> },
              { header: 'Events', cell: (e) => e.events.join(', ') },
              { header: 'Status', cell: (e) => <Nowrap>{e.enabled ? 'enabled' : 'disabled'}</Nowrap> },
              { header: 'Last 24 h', cell: (e) => <HealthSummary health={health.get(e.id)!} /> },
              { header: 'Last failure', cell: (e) => <LastFailure health={health.get(e.id)!} /> },
              { header: 'Created', cell: (e) => <When value={e.created_at} /> },
            ]}
          />
        </div>
      </Layout>
    );
  },
});

/**
 * `POST /admin/webhooks` (url, events[i]): the API's create, the same schema and service. A secret is generated;
 * it is shown once, in the confirmation on the endpoint's page, like a rotation's.
 */
export const createWebhookAction = defineAction({
  path: '/admin/webhooks',
  form: 'create',
  page: webhooksPage,
  async run({ deps, form, actor }) {
    const { endpoint, secret } = await createEndpoint(
      deps.db,
      parseOrThrow(createEndpointBody, endpointFields(form), 'body'),
      deps.config,
      actor,
    );
    return {
      redirect: webhookUrl(endpoint.id),
      notice: `Endpoint created. Its signing secret, shown only this once: ${secret}`,
    };
  },
});

/**
 * `POST /admin/webhooks/deliveries/:id/redeliver`: the API's retry, due now; back to the delivery's endpoint.
 * Its page for a refusal (a delivery deleted meanwhile) is the list: the URL names no endpoint.
 */
export const redeliverAction = defineAction({
  path: '/admin/webhooks/deliveries/:id/redeliver',
  form: 'redeliver',
  page: webhooksPage,
  async run({ deps, params, actor }) {
    const delivery = await retryDelivery(deps.db, uuidParam(params.id, 'Webhook delivery'), actor);
    return {
      redirect: `${webhookUrl(delivery.endpoint_id)}#deliveries`,
      notice: `Delivery of ${delivery.event_type} (${delivery.event_id}) queued again.`,
    };
  },
});

export const webhookRoutes = [
  webhooksPage,
  createWebhookAction,
  redeliverAction,
  ...webhookDetailRoutes,
  ...providerEventRoutes,
];
