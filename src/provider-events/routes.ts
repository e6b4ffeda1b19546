import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import {
  listProviderEventsQuery,
  providerEventBody,
  providerEventResponse,
  receivedResponse,
  serialiseProviderEvent,
} from './schema.ts';
import { getProviderEvent, listProviderEvents, receiveProviderWebhook, replayProviderEvent } from './service.ts';
import { PROVIDERS } from './verify.ts';

const tag = 'Provider webhooks';

/** Each provider's signature header and what it holds (verify.ts). */
const SIGNATURE = {
  provider_a: {
    name: 'provider_a-Signature',
    holds: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with PROVIDER_A_WEBHOOK_SECRET>',
  },
  provider_b: { name: 'x-callback-token', holds: 'the PROVIDER_B_CALLBACK_TOKEN itself' },
  provider_c: { name: 'X-Signature', holds: 'hex HMAC-SHA256 of the raw body with PROVIDER_C_WEBHOOK_SECRET' },
} as const;

const webhookRoutes = PROVIDERS.map((provider) =>
  defineRoute({
    method: 'post',
    path: `/api/billing/webhooks/${provider}`,
    auth: 'provider',
    tag,
    summary:
      `Receive a ${provider} event: verified by ${SIGNATURE[provider].name}, stored and queued, acknowledged ` +
      `at once`,
    idempotent: false,
    headers: [{ name: SIGNATURE[provider].name, required: true, description: SIGNATURE[provider].holds }],
    rawBody: {
      description: `The event exactly as ${provider} sends it; the signature covers these bytes`,
      schema: providerEventBody[provider],
    },
    responses: {
      200: { description: 'Stored (or already stored: a duplicate has no second effect)', schema: receivedResponse },
      400: { description: 'invalid_signature (nothing stored); invalid_request (signed, but not an event)' },
      503: { description: 'provider_not_configured: no secret is set to verify it (the provider retries later)' },
    },
    errors: ['provider_not_configured'],
    handler: async ({ deps, ctx }) => {
      await receiveProviderWebhook(
        deps.db,
        provider,
        ctx.state.rawBody ?? Buffer.alloc(0),
        (name) => ctx.get(name),
        deps.config,
      );
      return { status: 200, body: { received: true } };
    },
  }),
);

export const providerEventRoutes = [
  ...webhookRoutes,
  defineRoute({
    method: 'get',
    path: '/api/billing/provider-events',
    auth: 'admin',
    tag,
    summary: 'List stored provider events in arrival order, with their processing status and failure reason',
    query: listProviderEventsQuery,
    responses: { 200: { description: 'Provider events', schema: z.array(providerEventResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) =>
      listReply(ctx, await listProviderEvents(deps.db, query, query), serialiseProviderEvent),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/provider-events/:id',
    auth: 'admin',
    tag,
    summary: 'Read one stored provider event',
    params: idParams,
    responses: {
      200: { description: 'Provider event', schema: providerEventResponse },
      404: { description: 'not_found' },
    },
    errors: [],
    handler: async ({ deps, params }) => ({ body: serialiseProviderEvent(await getProviderEvent(deps.db, params.id)) }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/billing/provider-events/:id/replay',
    auth: 'admin',
    tag,
    summary: 'Queue a stored event again (a failed one, after fixing its cause); an applied event is not applied twice',
    params: idParams,
    responses: {
      200: { description: 'The event, queued again unless already applied', schema: providerEventResponse },
      404: { description: 'not_found' },
    },
    errors: [],
    handler: async ({ deps, params, actor }) => ({
      body: serialiseProviderEvent(await replayProviderEvent(deps.db, params.id, actor)),
    }),
  }),
];
