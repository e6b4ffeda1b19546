import { z } from 'zod';
import { iso } from '../http/schemas.ts';
import { AGING_BUCKETS, type AgingReport } from './service.ts';

const amount = z.string().describe('decimal string in the currency of the figure');

/** GET /api/reports/aging (C-16). */
export const agingResponse = z
  .object({
    asOf: z.string().describe('days past due are counted to this day (UTC)'),
    currencies: z.array(
      z.object({
        currency: z.string(),
        total: amount.describe('owed on open (issued and overdue) invoices'),
        count: z.number().int(),
        buckets: z
          .array(z.object({ bucket: z.enum(AGING_BUCKETS), count: z.number().int(), amount }))
          .describe('current (not yet due), 1-30, 31-60, 61-90 and 90+ days past the due date'),
      }),
    ),
  })
  .meta({
    examples: [
      {
        asOf: '2026-02-05T09:30:00.000Z',
        currencies: [
          {
            currency: 'USD',
            total: '3120.50',
            count: 9,
            buckets: [
              { bucket: 'current', count: 5, amount: '2258.50' },
              { bucket: '1-30', count: 2, amount: '490.00' },
              { bucket: '31-60', count: 1, amount: '323.00' },
              { bucket: '61-90', count: 0, amount: '0.00' },
              { bucket: '90+', count: 1, amount: '49.00' },
            ],
          },
        ],
      },
    ],
  });

export const serialiseAging = (report: AgingReport): z.infer<typeof agingResponse> => ({
  ...report,
  asOf: iso(report.asOf)!,
});
