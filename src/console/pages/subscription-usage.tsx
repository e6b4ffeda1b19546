/**
 * Usage on the console (issue 35): a subscription's current usage with each charge's tiers (U-9), the CSV export of
 * its events in a period, and the tier breakdown an invoice's usage line shows (U-11).
 */
import { z } from 'zod';
import { timestampInput, uuid } from '../../http/schemas.ts';
import type { TierAmount } from '../../pricing/usage.ts';
import { subscriptionUsageEvents } from '../../usage-api/read.ts';
import type { PeriodUsage } from '../../usage/read.ts';
import { date, money } from '../components/format.ts';
import { Table } from '../components/Table.tsx';
import { defineExport } from '../http/route.ts';

/** The tiers a quantity filled: units x unit price + flat fee = amount (exact). */
export function TierList({ tiers, currency }: { tiers: TierAmount[]; currency: string }) {
  if (tiers.length === 0) return null;
  return (
    <ul class="tiers">
      {tiers.map((t) => (
        <li>
          {`${t.upTo === null ? 'above' : `up to ${t.upTo}`}: ${t.units} × ${t.unitPrice}` +
            `${t.flatFee !== '0' ? ` + ${money(t.flatFee, currency)}` : ''} = ${t.amount}`}
        </li>
      ))}
    </ul>
  );
}

/** An invoice line's usage (U-11): the quantity of the period, and the tiers under it. */
export function LineUsage({ usage, currency }: { usage: unknown; currency: string }) {
  const u = usage as {
    metricCode: string;
    quantity: string;
    tiers: TierAmount[];
    adjustment?: { billedQuantity: string };
  };
  return (
    <div class="line-usage">
      <span class="muted">
        {u.adjustment
          ? `${u.metricCode}: ${u.quantity} now, ${u.adjustment.billedQuantity} billed before`
          : `${u.metricCode}: ${u.quantity}`}
      </span>
      <TierList tiers={u.tiers} currency={currency} />
    </div>
  );
}

export const usageExportUrl = (subscriptionId: string, periodStart?: Date) => {
  const period = periodStart ? `&periodStart=${periodStart.toISOString()}` : '';
  return `/admin/usage/export.csv?subscriptionId=${subscriptionId}${period}`;
};

/** The subscription page's "Usage" section: the current period's charges, priced. */
export function UsageSection({ usage }: { usage: PeriodUsage }) {
  if (usage.charges.length === 0) return null;
  return (
    <section id="usage" class="words" aria-labelledby="usage-h">
      <h2 id="usage-h">Usage this period</h2>
      <p class="muted">
        {`${date(usage.periodStart)} to ${date(usage.periodEnd)}: ` +
          `${money(usage.amount.toString(), usage.currency)} so far, billed when the period ends. `}
        <a href={usageExportUrl(usage.subscriptionId)}>Export the period's events (CSV)</a>
      </p>
      <Table
        rows={usage.charges}
        empty="No usage charges."
        columns={[
          { header: 'Metric', cell: (c) => <code>{c.metricCode}</code> },
          { header: 'Aggregation', cell: (c) => c.aggregation },
          { header: 'Quantity', numeric: true, cell: (c) => c.quantity },
          { header: 'Amount', numeric: true, cell: (c) => money(c.amount.toString(), usage.currency) },
          { header: 'Tiers', cell: (c) => <TierList tiers={c.tiers} currency={usage.currency} /> },
        ]}
      />
    </section>
  );
}

/** `/admin/usage/export.csv?subscriptionId=&periodStart=`: every event of the period, oldest first. */
export const usageExport = defineExport({
  path: '/admin/usage/export.csv',
  filename: 'usage.csv',
  query: z.object({ subscriptionId: uuid, periodStart: timestampInput.optional() }),
  header: ['transaction_id', 'timestamp', 'metric', 'charge_id', 'value', 'properties', 'received_at'],
  async *rows({ deps, query }) {
    for await (const batch of subscriptionUsageEvents(deps.db, query.subscriptionId, query.periodStart))
      for (const e of batch)
        yield [
          e.transaction_id,
          e.timestamp.toISOString(),
          e.metric_code,
          e.charge_id,
          e.value ?? '',
          e.properties ? JSON.stringify(e.properties) : '',
          e.received_at.toISOString(),
        ];
  },
});
