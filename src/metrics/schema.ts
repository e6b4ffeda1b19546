import { z } from 'zod';
import { iso } from '../http/schemas.ts';
import type { RevenueMetrics } from './service.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

const amount = z.string().describe('decimal string in the currency of the figure');

const movementsResponse = z.object({
  new: amount.describe('MRR of subscriptions contributing nothing at the month start and something now'),
  expansion: amount.describe('MRR gained by subscriptions contributing more now than at the month start'),
  contraction: amount.describe('MRR lost by subscriptions contributing less now, but not nothing'),
  churn: amount.describe('MRR at the month start of subscriptions contributing nothing now'),
});

const currencyResponse = z.object({
  currency: z.string(),
  mrr: amount.describe('C-10'),
  arr: amount.describe('12 x mrr'),
  activeSubscriptions: z.number().int().describe('active and past_due: the subscriptions MRR counts'),
  trialingSubscriptions: z.number().int(),
  outstanding: amount.describe('amount due on issued and overdue invoices'),
  overdueAmount: amount,
  overdueCount: z.number().int(),
  collectedThisMonth: amount.describe('payments less refunds in the calendar month (UTC)'),
  movements: movementsResponse,
  series: z
    .array(
      z.object({ month: z.string().describe('YYYY-MM'), mrr: amount.describe('at the month end'), collected: amount }),
    )
    .describe('the last 12 calendar months, oldest first'),
});

export const revenueResponse = z
  .object({
    at: z.string().describe('the time the figures are as of'),
    currencies: z.array(currencyResponse),
    mostOverdue: z
      .array(
        z.object({
          id: z.uuid(),
          number: z.string(),
          customerId: z.uuid(),
          customerName: z.string(),
          currency: z.string(),
          amountDue: amount,
          dueDate: z.string(),
        }),
      )
      .describe('the 10 overdue invoices with the oldest due dates'),
  })
  .meta({
    examples: [
      {
        at: '2026-02-05T09:30:00.000Z',
        currencies: [
          {
            currency: 'USD',
            mrr: '12450.00',
            arr: '149400.00',
            activeSubscriptions: 254,
            trialingSubscriptions: 18,
            outstanding: '3120.50',
            overdueAmount: '862.00',
            overdueCount: 4,
            collectedThisMonth: '11980.00',
            movements: { new: '980.00', expansion: '245.00', contraction: '49.00', churn: '392.00' },
            series: [
              { month: '2026-01', mrr: '11666.00', collected: '11210.00' },
              { month: '2026-02', mrr: '12450.00', collected: '11980.00' },
            ],
          },
        ],
        mostOverdue: [
          {
            id: EXAMPLE_ID.invoice,
            number: 'INV-2026-000042',
            customerId: EXAMPLE_ID.customer,
            customerName: 'Jane Doe',
            currency: 'USD',
            amountDue: '431.92',
            dueDate: '2026-01-19T00:00:00.000Z',
          },
        ],
      },
    ],
  });

export function serialiseRevenue(metrics: RevenueMetrics): z.infer<typeof revenueResponse> {
  return {
    ...metrics,
    at: iso(metrics.at)!,
    mostOverdue: metrics.mostOverdue.map((i) => ({ ...i, dueDate: iso(i.dueDate)! })),
  };
}
