import { defineRoute } from '../http/route.ts';
import { requireCustomerScope } from '../http/principal.ts';
import { idParams } from '../http/schemas.ts';
import { readV1EventsBody } from './events-body.ts';
import { ingestEvents } from './ingest.ts';
import { serialiseUsage, subscriptionUsage } from './read.ts';
import {
  adminEventsBody,
  type EventInput,
  eventResultsResponse,
  usageQuery,
  usageResponse,
  v1EventsBody,
} from './schema.ts';

const tag = 'Usage';
const eventsResponses = {
  200: {
    description: 'One result per event, in order (accepted, duplicate or rejected)',
    schema: eventResultsResponse,
  },
  400: { description: 'invalid_request: not such a body, or more than 1,000 events; nothing is stored' },
};

export const usageRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/v1/usage/events',
    auth: 'apiKey',
    tag: 'v1',
    summary: "Report usage events of the API key's customer: 1 to 1,000, each answered (U-5, U-6)",
    body: v1EventsBody,
    readBody: readV1EventsBody,
    responses: eventsResponses,
    errors: [],
    // Retries are safe by transactionId (U-6); an Idempotency-Key would only add a second key to keep.
    idempotent: false,
    handler: async ({ deps, body, principal }) => {
      const customerId = requireCustomerScope(principal);
      // The parsed events are this request's own objects: each takes the key's customer in place, not in a copy.
      const events = body.events as (EventInput & { customerId?: string })[];
      for (const event of events) event.customerId = customerId;
      return { body: { results: await ingestEvents(deps.db, events as EventInput[]) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/billing/usage/events',
    auth: 'admin',
    tag,
    summary: 'Report usage events of any customers (each names customerId): 1 to 1,000, each answered (U-5, U-6)',
    body: adminEventsBody,
    responses: eventsResponses,
    errors: [],
    idempotent: false,
    handler: async ({ deps, body, actor }) => ({
      body: { results: await ingestEvents(deps.db, body.events, { actor }) },
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/subscriptions/:id/usage',
    auth: 'apiKey',
    tag: 'v1',
    summary: "A subscription's usage and its price in the current period, or a closed one by periodStart (U-9)",
    params: idParams,
    query: usageQuery,
    responses: { 200: { description: 'Usage', schema: usageResponse }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params, query, principal }) => ({
      body: serialiseUsage(
        await subscriptionUsage(deps.db, params.id, {
          customerId: requireCustomerScope(principal),
          periodStart: query.periodStart,
        }),
      ),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/subscriptions/:id/usage',
    auth: 'admin',
    tag,
    summary: "A subscription's usage and its price in the current period, or a closed one by periodStart (U-9)",
    params: idParams,
    query: usageQuery,
    responses: { 200: { description: 'Usage', schema: usageResponse }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params, query }) => ({
      body: serialiseUsage(await subscriptionUsage(deps.db, params.id, { periodStart: query.periodStart })),
    }),
  }),
];
