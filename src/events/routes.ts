import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { eventResponse, listEventsQuery, serialiseEvent } from './schema.ts';
import { listEvents } from './service.ts';

export const eventRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/billing/events',
    auth: 'admin',
    tag: 'Events',
    summary: 'List recorded events in creation order, optionally of one type',
    query: listEventsQuery,
    responses: { 200: { description: 'Events', schema: z.array(eventResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) =>
      listReply(ctx, await listEvents(deps.db, query, query.type), serialiseEvent),
  }),
];
