import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import {
  advanceTestClockBody,
  createTestClockBody,
  listTestClocksQuery,
  serialiseTestClock,
  testClockResponse,
} from './schema.ts';
import { createTestClock, deleteTestClock, getTestClock, listTestClocks, requestTestClockAdvance } from './service.ts';

const TAG = 'Test clocks';

export const testClockRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/test-clocks',
    auth: 'admin',
    tag: TAG,
    summary: 'Create a test clock (TC-1): simulated time for the customers created on it (testClockId)',
    body: createTestClockBody,
    responses: { 201: { description: 'Created', schema: testClockResponse } },
    errors: ['test_clocks_disabled'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialiseTestClock(await createTestClock(deps.db, body, actor)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/test-clocks',
    auth: 'admin',
    tag: TAG,
    summary: 'List test clocks',
    query: listTestClocksQuery,
    responses: { 200: { description: 'Test clocks', schema: z.array(testClockResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) => listReply(ctx, await listTestClocks(deps.db, query), serialiseTestClock),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/test-clocks/:id',
    auth: 'admin',
    tag: TAG,
    summary: 'Get a test clock (its status shows when an advance is done)',
    params: idParams,
    responses: { 200: { description: 'The test clock', schema: testClockResponse } },
    errors: [],
    handler: async ({ deps, params }) => ({ body: serialiseTestClock(await getTestClock(deps.db, params.id)) }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/billing/test-clocks/:id/advance',
    auth: 'admin',
    tag: TAG,
    summary:
      'Advance a test clock (TC-3): its customers go through every lifecycle step due until frozenTime, in time ' +
      'order, in a queued job; the clock is advancing until it is ready at the new time (at most 2 years ahead)',
    params: idParams,
    body: advanceTestClockBody,
    responses: { 202: { description: 'The clock, advancing', schema: testClockResponse } },
    errors: ['clock_not_advanceable'],
    handler: async ({ deps, params, body, actor }) => ({
      status: 202,
      body: serialiseTestClock(await requestTestClockAdvance(deps.db, params.id, body, actor)),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/billing/test-clocks/:id',
    auth: 'admin',
    tag: TAG,
    summary: 'Delete a test clock with its customers and every record of theirs (TC-1)',
    params: idParams,
    responses: { 204: { description: 'Deleted' } },
    errors: ['clock_not_advanceable'],
    handler: async ({ deps, params, actor }) => {
      await deleteTestClock(deps.db, params.id, actor);
      return { status: 204 };
    },
  }),
];
