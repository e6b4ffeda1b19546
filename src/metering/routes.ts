import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import { createMetricBody, listMetricsQuery, metricResponse, serialiseMetric, updateMetricBody } from './schema.ts';
import { createMetric, deleteMetric, getMetric, listMetrics, updateMetric } from './service.ts';

const tag = 'Usage';

export const metricRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/metrics',
    auth: 'admin',
    tag,
    summary: 'Create a billable metric: what a plan charge measures (U-1)',
    body: createMetricBody,
    responses: {
      201: { description: 'Created', schema: metricResponse },
      409: { description: 'metric_code_taken' },
    },
    errors: ['metric_code_taken'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialiseMetric(await createMetric(deps.db, body, actor)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/metrics',
    auth: 'admin',
    tag,
    summary: 'List billable metrics',
    query: listMetricsQuery,
    responses: { 200: { description: 'Metrics', schema: z.array(metricResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) => listReply(ctx, await listMetrics(deps.db, query), serialiseMetric),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/metrics/:id',
    auth: 'admin',
    tag,
    summary: 'Read one billable metric',
    params: idParams,
    responses: { 200: { description: 'Metric', schema: metricResponse }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params }) => ({ body: serialiseMetric(await getMetric(deps.db, params.id)) }),
  }),
  defineRoute({
    method: 'put',
    path: '/api/billing/metrics/:id',
    auth: 'admin',
    tag,
    summary: "Rename or describe a metric; its aggregation and field only while no plan's charge uses it",
    params: idParams,
    body: updateMetricBody,
    responses: {
      200: { description: 'Metric', schema: metricResponse },
      404: { description: 'not_found' },
      409: { description: 'metric_in_use' },
    },
    errors: ['metric_in_use'],
    handler: async ({ deps, params, body, actor }) => ({
      body: serialiseMetric(await updateMetric(deps.db, params.id, body, actor)),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/billing/metrics/:id',
    auth: 'admin',
    tag,
    summary: "Delete a metric no plan's charge uses",
    params: idParams,
    responses: {
      204: { description: 'Deleted' },
      404: { description: 'not_found' },
      409: { description: 'metric_in_use' },
    },
    errors: ['metric_in_use'],
    handler: async ({ deps, params, actor }) => {
      await deleteMetric(deps.db, params.id, actor);
      return { status: 204 };
    },
  }),
];
