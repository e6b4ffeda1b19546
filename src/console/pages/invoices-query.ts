/** The invoice list's query (console.md "money", C-16's aging links) as the invoices service takes it. */
import { z } from 'zod';
import { INVOICE_STATUSES } from '../../invoices/schema.ts';
import { currencyCode } from '../../money.ts';
import { AGING_BUCKETS, type AgingBucket, BUCKET_DAYS } from '../../reports/service.ts';
import { createdRange, filterValues, moneyListQuery, type MoneyListFilters } from './invoices-filters.tsx';

/** The money list's filters, and an aging bucket in a currency (the aging report's links, C-16). */
export const invoicesQuery = moneyListQuery(INVOICE_STATUSES).extend({
  aging: z.enum(AGING_BUCKETS).optional(),
  currency: currencyCode.optional(),
});

export type InvoiceFilters = MoneyListFilters & { aging?: AgingBucket; currency?: string };

const DAY_MS = 86_400_000;

/** An aging bucket as due dates, counted in whole UTC days before today as the report counts them. */
function agingOf(q: InvoiceFilters) {
  if (!q.aging) return q.currency ? { aging: { currency: q.currency, undated: true } } : {};
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const { min, max } = BUCKET_DAYS[q.aging];
  return {
    aging: {
      currency: q.currency,
      dueFrom: max === undefined ? undefined : new Date(today - max * DAY_MS),
      dueBefore: min === undefined ? undefined : new Date(today - (min - 1) * DAY_MS),
      undated: q.aging === 'current',
    },
  };
}

export const serviceFilters = (q: InvoiceFilters) => ({
  status: q.status,
  customerId: q.customerId,
  ...createdRange(q),
  ...agingOf(q),
});

export const listFilters = (q: InvoiceFilters) => ({ ...filterValues(q), aging: q.aging, currency: q.currency });
