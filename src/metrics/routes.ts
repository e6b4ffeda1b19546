import { defineRoute } from '../http/route.ts';
import { revenueResponse, serialiseRevenue } from './schema.ts';
import { currentRevenueMetrics } from './service.ts';

export const metricsRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/metrics/revenue',
    auth: 'admin',
    tag: 'Metrics',
    summary:
      'Revenue per currency now (C-10): MRR, ARR, subscriptions, receivables, collections, MRR movements this ' +
      'month, 12 months of history, the most overdue invoices',
    responses: { 200: { description: 'The figures', schema: revenueResponse } },
    errors: [],
    handler: async ({ deps }) => ({ body: serialiseRevenue(await currentRevenueMetrics(deps.db)) }),
  }),
];
