/**
 * Billing usage in arrears (U-10..U-12), set-wise for a batch of invoices: each invoice of a subscription gets one
 * line per charge of the period it closes (zero usage too), the unbilled usage of other periods that ended (or, at a
 * plan change, of the old plan's charges up to the change), and an adjustment line for each period billed before
 * whose quantity changed since (late events). Priced by src/pricing/usage.ts; what was billed is recorded in the
 * invoice's transaction (usage_billings), so a period is billed once however often the sweep runs.
 */
import type { Db } from '../db/knex.ts';
import { chargesById, chargeTerms, type ChargeWithMetric } from '../metering/charges.ts';
import { money } from '../money.ts';
import type { LineInput } from '../pricing/lines.ts';
import { priceUsage, type TierAmount } from '../pricing/usage.ts';
import { type BillingRow, type PendingUsageRow, pendingUsage, upsertBillings } from './repo.ts';

/** A usage line's `usage` (U-11); an adjustment's also says what was billed before. */
export interface UsageDetail {
  chargeId: string;
  metricCode: string;
  aggregation: string;
  quantity: string;
  periodStart: string;
  periodEnd: string;
  tiers: TierAmount[];
  adjustment?: { billedQuantity: string; billedAmount: string };
  trial?: boolean;
}

export type UsageLine = LineInput & { usage: UsageDetail };

export interface UsageInvoice {
  customerId: string;
  subscriptionId: string;
  currency: string;
  /** The period this invoice closes: a line for each of `charges`, zero usage too. */
  closed: { start: Date; end: Date; trial: boolean } | null;
  /** The plan's charges whose period is closed. */
  charges: ChargeWithMetric[];
  /** Unbilled usage of periods ended by then goes on this invoice too. */
  until: Date;
  /** A plan change: every unbilled period of `charges`, ended or not, goes on it (U-10). */
  includeOpen?: boolean;
}

export interface UsageBill {
  lines: UsageLine[];
  /** What to record once the invoice has its id (recordBilledUsage). */
  billings: Omit<BillingRow, 'invoice_id'>[];
}

const day = (d: Date) => d.toISOString().slice(0, 10);
const rowKey = (r: { subscription_id: string; charge_id: string; period_start: Date | string }) =>
  `${r.subscription_id}|${r.charge_id}|${new Date(r.period_start).toISOString()}`;

function usageLine(
  charge: ChargeWithMetric,
  row: { quantity: string; period_start: Date; period_end: Date },
  currency: string,
  trial: boolean,
  billed?: { quantity: string; amount: string },
): { line: UsageLine; amount: string } {
  const price = priceUsage(chargeTerms(charge), row.quantity, currency);
  const amount = trial ? money(0) : price.amount;
  const period = `${day(row.period_start)} to ${day(row.period_end)}`;
  const usage: UsageDetail = {
    chargeId: charge.id,
    metricCode: charge.metric.code,
    aggregation: charge.metric.aggregation,
    quantity: money(row.quantity).toFixed(),
    periodStart: row.period_start.toISOString(),
    periodEnd: row.period_end.toISOString(),
    tiers: price.tiers,
    ...(trial ? { trial: true } : {}),
    ...(billed
      ? { adjustment: { billedQuantity: money(billed.quantity).toFixed(), billedAmount: billed.amount } }
      : {}),
  };
  const line: UsageLine = billed
    ? {
        description: `Usage adjustment: ${charge.metric.name} (${period})`,
        quantity: 1,
        unitPrice: amount.minus(billed.amount).toString(),
        usage,
      }
    : {
        description: `${charge.metric.name} (${period})${trial ? ' (trial, not billed)' : ''}`,
        quantity: 1,
        unitPrice: amount.toString(),
        usage,
      };
  return { line, amount: amount.toString() };
}

/**
 * The usage lines of `invoices` (several may be one subscription's: a sweep catching up periods), in one read of
 * the subscriptions' pending usage. A pending row goes on the first invoice that may take it.
 */
export async function billUsage(trx: Db, invoices: UsageInvoice[]): Promise<UsageBill[]> {
  const pending = await pendingUsage(
    trx,
    invoices.map((i) => ({
      customerId: i.customerId,
      subscriptionId: i.subscriptionId,
      closedStart: i.closed?.start ?? null,
    })),
  );
  const known = new Map(invoices.flatMap((i) => i.charges.map((c) => [c.id, c] as const)));
  const others = await chargesById(
    trx,
    pending.map((p) => p.charge_id).filter((id) => !known.has(id)),
  );
  const chargeOf = (id: string) => known.get(id) ?? others.get(id)!;
  const bySub = new Map<string, PendingUsageRow[]>();
  for (const row of pending) bySub.set(row.subscription_id, [...(bySub.get(row.subscription_id) ?? []), row]);
  const taken = new Set<string>();

  return invoices.map((invoice) => {
    const bill: UsageBill = { lines: [], billings: [] };
    const rows = bySub.get(invoice.subscriptionId) ?? [];
    const add = (
      charge: ChargeWithMetric,
      row: Omit<PendingUsageRow, 'customer_id' | 'subscription_id' | 'charge_id'>,
      trial: boolean,
    ) => {
      const billed =
        row.billed_quantity === null || row.billed_quantity === undefined
          ? undefined
          : { quantity: row.billed_quantity, amount: row.billed_amount! };
      const { line, amount } = usageLine(charge, row, invoice.currency, trial, billed);
      // A trial period's late events change nothing billed: recorded, no line.
      if (!(billed && money(line.unitPrice).isZero())) bill.lines.push(line);
      bill.billings.push({
        customer_id: invoice.customerId,
        subscription_id: invoice.subscriptionId,
        charge_id: charge.id,
        period_start: row.period_start,
        period_end: row.period_end,
        quantity: row.quantity,
        amount,
        trial,
      });
    };
    if (invoice.closed) {
      const closed = invoice.closed;
      for (const charge of invoice.charges) {
        const row = rows.find((r) => r.charge_id === charge.id && r.period_start.getTime() === closed.start.getTime());
        if (row) taken.add(rowKey(row));
        if (row && row.billed_quantity !== null && row.billed_quantity !== undefined) continue;
        // The span billed ends where the invoice closes it: a plan change's instant, not the period's end (U-10).
        add(
          charge,
          row
            ? { ...row, period_end: closed.end }
            : ({
                period_start: closed.start,
                period_end: closed.end,
                quantity: '0',
                billed_quantity: null,
              } as PendingUsageRow),
          closed.trial,
        );
      }
    }
    const open = new Set(invoice.includeOpen ? invoice.charges.map((c) => c.id) : []);
    for (const row of rows) {
      if (taken.has(rowKey(row))) continue;
      const billed = row.billed_quantity !== null && row.billed_quantity !== undefined;
      if (billed && money(row.billed_quantity!).eq(row.quantity)) continue;
      if (!billed && row.period_end.getTime() > invoice.until.getTime() && !open.has(row.charge_id)) continue;
      taken.add(rowKey(row));
      add(chargeOf(row.charge_id), row, billed ? Boolean(row.billed_trial) : false);
    }
    return bill;
  });
}

/** Records what an issued invoice billed (its id given now), in the invoice's transaction. */
export function recordBilledUsage(trx: Db, billed: { invoiceId: string; bill: UsageBill }[]): Promise<void> {
  return upsertBillings(
    trx,
    billed.flatMap(({ invoiceId, bill }) => bill.billings.map((b) => ({ ...b, invoice_id: invoiceId }))),
  );
}
