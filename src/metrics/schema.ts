import { z } from 'zod';
import { iso } from '../http/schemas.ts';
import type { RevenueMetrics } from './service.ts';

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
  series: z.array(z.object({ month: z.string().describe('YYYY-MM'), mrr: amount.describe('at the month end'), collected: amount })).describe('the last 12 calendar months, oldest first'),
});

export const revenueResponse = z.object({
  at: z.string().describe('the time the figures are as of'),
  currencies: z.array(currencyResponse),
  mostOverdue: z.array(z.object({
    id: z.uuid(),
    number: z.string(),
    customerId: z.uuid(),
    customerName: z.string(),
    currency: z.string(),
    amountDue: amount,
    dueDate: z.string(),
  })).describe('the 10 overdue invoices with the oldest due dates'),
});

export function serialiseRevenue(metrics: RevenueMetrics): z.infer<typeof revenueResponse> {
  return {
    ...metrics,
    at: iso(metrics.at)!,
    mostOverdue: metrics.mostOverdue.map((i) => ({ ...i, dueDate: iso(i.dueDate)! })),
  };
}
