import { defineRoute } from '../http/route.ts';
import { agingResponse, serialiseAging } from './schema.ts';
import { agingReport, currentReport } from './service.ts';

export const reportRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/reports/aging',
    auth: 'admin',
    tag: 'Metrics',
    summary:
      'Open invoices by days past due (C-16): current, 1-30, 31-60, 61-90, 90+, per currency, with counts and amounts',
    responses: { 200: { description: 'The aging report', schema: agingResponse } },
    errors: [],
    handler: async ({ deps }) => ({
      body: serialiseAging(await currentReport(deps.db, 'aging', () => agingReport(deps.db))),
    }),
  }),
];
