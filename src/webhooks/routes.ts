import { z } from 'zod';
import { keyringOf } from '../crypto/envelope.ts';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams, pageQuery } from '../http/schemas.ts';
import {
  createdEndpointResponse,
  createEndpointBody,
  deliveryParams,
  deliveryResponse,
  endpointResponse,
  listDeliveriesQuery,
  serialiseDelivery,
  serialiseEndpoint,
  updateEndpointBody,
} from './schema.ts';
import {
  createEndpoint,
  deleteEndpoint,
  listDeliveries,
  listEndpoints,
  retryDelivery,
  rotateEndpointSecret,
  updateEndpoint,
} from './service.ts';

const base = '/api/billing/webhooks/endpoints';

export const webhookRoutes = [
  defineRoute({
    method: 'post',
    path: base,
    auth: 'admin',
    tag: 'Webhooks',
    summary: 'Register an outbound webhook endpoint; the signing secret is answered once',
    body: createEndpointBody,
    responses: {
      201: { description: 'Created, with the secret', schema: createdEndpointResponse },
      400: { description: 'invalid_request (unknown event type, empty events, bad or private url)' },
    },
    errors: [],
    handler: async ({ deps, body, actor }) => {
      const { endpoint, secret } = await createEndpoint(deps.db, body, deps.config, actor);
      // An Idempotency-Key replay does not show the secret again.
      return {
        status: 201,
        body: { ...serialiseEndpoint(endpoint), secret },
        replayBody: serialiseEndpoint(endpoint),
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: base,
    auth: 'admin',
    tag: 'Webhooks',
    summary: 'List webhook endpoints (never their secrets)',
    query: pageQuery,
    responses: { 200: { description: 'Endpoints', schema: z.array(endpointResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) => listReply(ctx, await listEndpoints(deps.db, query), serialiseEndpoint),
  }),
  defineRoute({
    method: 'put',
    path: `${base}/:id`,
    auth: 'admin',
    tag: 'Webhooks',
    summary:
      'Change events, url, enabled or secret (a secret set here replaces the old one at once; rotate-secret keeps ' +
      'it valid for 24 h)',
    params: idParams,
    body: updateEndpointBody,
    responses: {
      200: { description: 'Endpoint', schema: endpointResponse },
      400: { description: 'invalid_request' },
      404: { description: 'not_found' },
    },
    errors: [],
    handler: async ({ deps, params, body, actor }) => ({
      body: serialiseEndpoint(await updateEndpoint(deps.db, params.id, body, deps.config, actor)),
    }),
  }),
  defineRoute({
    method: 'post',
    path: `${base}/:id/rotate-secret`,
    auth: 'admin',
    tag: 'Webhooks',
    summary:
      'Replace the signing secret with a new generated one, answered once; the old one keeps signing beside it ' +
      'for 24 h',
    params: idParams,
    responses: {
      200: { description: 'The endpoint with its new secret (never shown again)', schema: createdEndpointResponse },
      404: { description: 'not_found' },
    },
    errors: [],
    handler: async ({ deps, params, actor }) => {
      const { endpoint, secret } = await rotateEndpointSecret(deps.db, params.id, keyringOf(deps.config), actor);
      // An Idempotency-Key replay does not show the secret again.
      return { body: { ...serialiseEndpoint(endpoint), secret }, replayBody: serialiseEndpoint(endpoint) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: `${base}/:id`,
    auth: 'admin',
    tag: 'Webhooks',
    summary: 'Delete an endpoint with its delivery log; pending deliveries stop',
    params: idParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params, actor }) => {
      await deleteEndpoint(deps.db, params.id, actor);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: `${base}/:id/deliveries`,
    auth: 'admin',
    tag: 'Webhooks',
    summary: "An endpoint's deliveries in creation order, with every attempt; `status` filters",
    params: idParams,
    query: listDeliveriesQuery,
    responses: {
      200: { description: 'Deliveries', schema: z.array(deliveryResponse) },
      404: { description: 'not_found' },
    },
    errors: [],
    handler: async ({ deps, params, query, ctx }) =>
      listReply(ctx, await listDeliveries(deps.db, params.id, query, query.status), serialiseDelivery),
  }),
  defineRoute({
    method: 'post',
    path: `${base}/:id/deliveries/:deliveryId/retry`,
    auth: 'admin',
    tag: 'Webhooks',
    summary: 'Redeliver now',
    params: deliveryParams,
    responses: { 202: { description: 'Queued', schema: deliveryResponse }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params, actor }) => ({
      status: 202,
      body: serialiseDelivery(await retryDelivery(deps.db, params.deliveryId, actor, params.id)),
    }),
  }),
];
