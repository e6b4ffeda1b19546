/**
 * Usage on a subscription's invoices (U-10..U-12): the renewal invoice bills the closed period's usage in arrears, a
 * cancellation at period end gets a final invoice with its last period's usage, and a plan change bills the old
 * plan's usage up to the change. The lines come from usage/billing.ts (priced by src/pricing/usage.ts) and go through
 * the one issuing path (invoices/issue.ts createInvoices) with the invoice they belong to; what they billed is recorded
 * in the same transaction, so a period is billed once however often the sweep runs or is killed.
 */
import { newUuid } from '../crypto/ids.ts';
import { addLedgerEntry } from '../credits/ledger.ts';
import type { Db } from '../db/knex.ts';
import { chargesOfPlan, chargesOfPlans } from '../metering/charges.ts';
import { money } from '../money.ts';
import type { LineInput } from '../pricing/lines.ts';
import { absorbNegative } from '../pricing/usage.ts';
import type { PlanRow } from '../plans/repo.ts';
import { billUsage, recordBilledUsage, type UsageBill, type UsageInvoice } from '../usage/billing.ts';
import { planTaxRateIds } from './invoicing.ts';
import { trialCovers } from './periods.ts';
import type { RenewalPlan } from './renewal-plan.ts';
import type { SubscriptionRow } from './repo.ts';

/**
 * What usage billing writes with the invoices: the billed quantities (they name the invoice by the id chosen before it
 * is issued, so they need no number and are written before the year's counter is taken) and any store credit (U-12),
 * written after the invoices, under the ledger locks their issuing took.
 */
export interface UsageRecord {
  recordBillings(trx: Db): Promise<void>;
  recordCredits(trx: Db): Promise<void>;
}

interface Credit {
  customerId: string;
  currency: string;
  amount: string;
  invoiceId: string;
}

const isAdjustment = (line: LineInput) => Boolean((line.usage as { adjustment?: unknown } | undefined)?.adjustment);

/** `lines` with the usage lines added, a negative adjustment the invoice cannot absorb moved to store credit. */
function withUsage(lines: LineInput[], bill: UsageBill, currency: string) {
  return absorbNegative([...lines, ...bill.lines], currency, isAdjustment);
}

function recorder(billed: { invoiceId: string; bill: UsageBill }[], credits: Credit[]): UsageRecord {
  return {
    recordBillings: (trx) => recordBilledUsage(trx, billed),
    async recordCredits(trx) {
      for (const c of credits)
        await addLedgerEntry(trx, {
          customer_id: c.customerId,
          currency: c.currency,
          amount: c.amount,
          kind: 'credit',
          description: `Usage adjustment beyond the total of invoice ${c.invoiceId}`,
        });
    },
  };
}

/**
 * Adds usage to a renewal batch's invoices before they are issued: each invoice bills the period it closes (every
 * charge of the plan, zero usage too), unbilled usage of periods that ended, and adjustments of periods billed before
 * (late events); a subscription canceled at period end gets a final invoice (a new request and slot) when its last
 * period has usage to bill. Set-wise: one read of the charges and one of the pending usage for the batch.
 */
export async function addUsageToRenewals(
  trx: Db,
  renewals: RenewalPlan[],
  plans: Map<string, PlanRow>,
  asOf: Date,
): Promise<UsageRecord> {
  const charges = await chargesOfPlans(trx, [...new Set(renewals.map((r) => r.sub.plan_id))]);
  const targets: { renewal: RenewalPlan; index: number | null; invoice: UsageInvoice }[] = [];
  for (const renewal of renewals) {
    const { sub } = renewal;
    const base = { customerId: sub.customer_id, subscriptionId: sub.id, charges: charges.get(sub.plan_id) ?? [] };
    for (const [index, r] of renewal.requests.entries()) {
      const invoice = { ...base, currency: r.currency, closed: r.closes ?? null, until: r.period?.start ?? asOf };
      targets.push({ renewal, index, invoice });
    }
    if (renewal.result.canceled > 0) {
      const closed = {
        start: sub.current_period_start,
        end: sub.current_period_end,
        trial: trialCovers(sub.trial_end, sub.current_period_end),
      };
      const currency = plans.get(sub.plan_id)!.currency;
      targets.push({
        renewal,
        index: null,
        invoice: { ...base, currency, closed, until: closed.end, includeOpen: true },
      });
    }
  }
  const bills = await billUsage(
    trx,
    targets.map((t) => t.invoice),
  );
  const billed: { invoiceId: string; bill: UsageBill }[] = [];
  const credits: Credit[] = [];
  targets.forEach(({ renewal, index, invoice }, k) => {
    const bill = bills[k]!;
    if (bill.billings.length === 0) return;
    let at = index;
    if (at === null) {
      // A final invoice only when the last period has something to bill.
      if (bill.lines.every((l) => money(l.unitPrice).isZero() && money((l.usage.quantity as string) ?? 0).isZero()))
        return;
      const { customerId, subscriptionId, currency } = invoice;
      // T-2: the final invoice's lines take the plan's rates, as the renewals' do.
      const planRates = planTaxRateIds(plans.get(renewal.sub.plan_id)!);
      renewal.requests.push({
        id: newUuid(),
        customerId,
        subscriptionId,
        currency,
        lineItems: [],
        status: 'issued',
        planTaxRateIds: planRates,
      });
      at = renewal.requests.length - 1;
      renewal.slots.push({ invoice: at });
      renewal.result.invoicesCreated += 1;
    }
    const request = renewal.requests[at]!;
    const fitted = withUsage(request.lineItems, bill, invoice.currency);
    request.lineItems = fitted.lines;
    billed.push({ invoiceId: request.id, bill });
    if (fitted.credit.gt(0)) credits.push({ ...invoice, amount: fitted.credit.toString(), invoiceId: request.id });
  });
  return recorder(billed, credits);
}

/**
 * A plan change (U-10): the old plan's usage up to the change (the current period's, and any unbilled or changed
 * before) added to the change's lines; `record` once the invoice has its id. The new plan's charges count from the
 * change: events after it are the new charges'.
 */
export async function usageAtPlanChange(
  trx: Db,
  sub: SubscriptionRow,
  oldPlan: PlanRow,
  at: Date,
): Promise<{ fit(lines: LineInput[]): LineInput[]; record(trx: Db, invoiceId: string): Promise<void> }> {
  const invoice: UsageInvoice = {
    customerId: sub.customer_id,
    subscriptionId: sub.id,
    currency: oldPlan.currency,
    closed: { start: sub.current_period_start, end: at, trial: sub.status === 'trialing' },
    charges: await chargesOfPlan(trx, oldPlan.id),
    until: at,
    includeOpen: true,
  };
  const [billed] = await billUsage(trx, [invoice]);
  // T-2: the old plan's usage is taxed with the old plan's rates, whatever the new plan's are.
  const bill = { ...billed!, lines: billed!.lines.map((l) => ({ ...l, planTaxRateIds: oldPlan.tax_rate_ids })) };
  let credit = money(0);
  return {
    fit(lines) {
      if (bill.lines.length === 0) return lines;
      const fitted = withUsage(lines, bill, invoice.currency);
      credit = fitted.credit;
      return fitted.lines;
    },
    async record(trx, invoiceId) {
      const credits = credit.gt(0) ? [{ ...invoice, amount: credit.toString(), invoiceId }] : [];
      const usage = recorder([{ invoiceId, bill }], credits);
      await usage.recordBillings(trx);
      await usage.recordCredits(trx);
    },
  };
}
