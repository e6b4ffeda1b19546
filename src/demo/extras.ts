/**
 * The rest of a year's back office, dated on the timeline: one-off invoices (one voided, one left a draft),
 * store credit grants, credit notes, refunds and the webhook endpoint whose deliveries fail; then, at the
 * end, license keys for the licensed product's subscribers with their devices activated.
 */
import { SYSTEM_ACTOR } from '../actor.ts';
import type { AppDeps } from '../app-deps.ts';
import { createCreditNoteBody } from '../credit-notes/schema.ts';
import { createCreditBody } from '../credits/schema.ts';
import { createInvoiceBody } from '../invoices/schema.ts';
import { createInvoice, listInvoices } from '../invoices/service.ts';
import { validateLicense } from '../licenses/check.ts';
import { createLicenseBody, updateLicenseBody } from '../licenses/schema.ts';
import { createLicense, updateLicense } from '../licenses/service.ts';
import { formatMoney, money } from '../money.ts';
import { listPayments } from '../payments/service.ts';
import { createRefundBody } from '../refunds/schema.ts';
import { createRefund } from '../refunds/service.ts';
import { grantCredit, issueCreditNote, setInvoiceStatus } from '../settlement/service.ts';
import { listSubscriptions } from '../subscriptions/service.ts';
import { createEndpointBody } from '../webhooks/schema.ts';
import { createEndpoint } from '../webhooks/service.ts';
import type { Catalog } from './catalog.ts';
import type { Random } from './random.ts';
import type { DemoCustomer } from './story.ts';
import { addDays, type Timeline } from './timeline.ts';

export interface ExtrasContext {
  deps: AppDeps;
  timeline: Timeline;
  random: Random;
  end: Date;
  customers: DemoCustomer[];
}

export interface ExtrasCounts {
  oneOffInvoices: number;
  credits: number;
  creditNotes: number;
  refunds: number;
  webhookEndpoints: number;
}

/** Port 9 (discard) on loopback: nothing listens there, so every delivery to it fails. */
export const FAILING_WEBHOOK_URL = 'http://127.0.0.1:9/billing-webhooks';

const ONE_OFF = [
  {
    customer: 0,
    daysBeforeEnd: 250,
    line: { description: 'Onboarding and data migration', quantity: 1, unitPrice: '1500.00' },
  },
  {
    customer: 11,
    daysBeforeEnd: 160,
    line: { description: 'Custom SSO integration (hours)', quantity: 12, unitPrice: '150.00' },
    taxRate: '8.25',
  },
  { customer: 14, daysBeforeEnd: 70, line: { description: 'On-site training day', quantity: 2, unitPrice: '1200.00' } },
  {
    customer: 25,
    daysBeforeEnd: 9,
    line: { description: 'Dedicated environment setup', quantity: 1, unitPrice: '2500.00' },
  },
  {
    customer: 18,
    daysBeforeEnd: 130,
    line: { description: 'Consulting (issued in error)', quantity: 1, unitPrice: '800.00' },
    voidAfterDays: 1,
  },
  {
    customer: 2,
    daysBeforeEnd: 1,
    line: { description: 'Additional storage, 2 TB (next quarter)', quantity: 2, unitPrice: '120.00' },
    draft: true,
  },
] as const;

const CREDITS = [
  {
    customer: 0,
    daysBeforeEnd: 200,
    amount: '100.00',
    currency: 'USD',
    description: 'Goodwill credit for the sync outage',
  },
  { customer: 14, daysBeforeEnd: 60, amount: '50.00', currency: 'USD', description: 'Referral credit' },
  { customer: 4, daysBeforeEnd: 30, amount: '40.00', currency: 'EUR', description: 'Referral credit' },
] as const;

const CREDIT_NOTES = [
  { daysBeforeEnd: 210, share: '0.25', reason: 'Service credit: sync outage' },
  { daysBeforeEnd: 95, share: '0.5', reason: 'Billed for seats removed before the period' },
  { daysBeforeEnd: 20, share: '0.1', reason: 'Price adjustment agreed by sales' },
] as const;

const REFUNDS = [
  { daysBeforeEnd: 150, share: '1', reason: 'Duplicate payment' },
  { daysBeforeEnd: 80, share: '0.3', reason: 'Partial refund: downtime' },
  { daysBeforeEnd: 25, share: '1', reason: 'Canceled within the refund window' },
  { daysBeforeEnd: 5, share: '0.5', reason: 'Goodwill' },
] as const;

/**
 * Newest first, ties (a sweep's invoices share their date) broken by the customer's place in the demo's
 * list rather than by the random ids, so the same rows are picked on every run.
 */
function newestFirst<T extends { created_at: Date; customer_id: string }>(
  rows: T[],
  customers: DemoCustomer[],
  amount: (row: T) => string,
): T[] {
  const place = new Map(customers.map((c) => [c.id, c.index]));
  return [...rows].sort(
    (a, b) =>
      b.created_at.getTime() - a.created_at.getTime() ||
      place.get(a.customer_id)! - place.get(b.customer_id)! ||
      money(amount(a)).comparedTo(amount(b)),
  );
}

export function scheduleExtras(ctx: ExtrasContext): ExtrasCounts {
  const counts: ExtrasCounts = { oneOffInvoices: 0, credits: 0, creditNotes: 0, refunds: 0, webhookEndpoints: 0 };
  const { deps, timeline, end, customers } = ctx;
  const at = (daysBeforeEnd: number) => addDays(end, -daysBeforeEnd - ctx.random.next() * 0.5);

  for (const invoice of ONE_OFF) {
    const customer = customers[invoice.customer]!;
    timeline.add(at(invoice.daysBeforeEnd), `invoice "${invoice.line.description}"`, async (now) => {
      const body = createInvoiceBody.parse({
        customerId: customer.id,
        currency: 'USD',
        lineItems: [invoice.line],
        taxRate: 'taxRate' in invoice ? invoice.taxRate : undefined,
        status: 'draft' in invoice ? 'draft' : 'issued',
      });
      const created = await createInvoice(deps.db, body, SYSTEM_ACTOR, { now, settings: deps.config });
      counts.oneOffInvoices += 1;
      if ('voidAfterDays' in invoice) {
        timeline.add(
          addDays(now, invoice.voidAfterDays),
          'void',
          async (later) =>
            void (await setInvoiceStatus(deps.db, created.invoice.id, 'void', SYSTEM_ACTOR, {
              now: later,
              settings: deps.config,
            })),
        );
      }
    });
  }

  for (const credit of CREDITS) {
    timeline.add(
      at(credit.daysBeforeEnd),
      `store credit for ${customers[credit.customer]!.person.name}`,
      async (now) => {
        await grantCredit(
          deps.db,
          createCreditBody.parse({
            customerId: customers[credit.customer]!.id,
            amount: credit.amount,
            currency: credit.currency,
            description: credit.description,
          }),
          SYSTEM_ACTOR,
          { now },
        );
        counts.credits += 1;
      },
    );
  }

  for (const [i, note] of CREDIT_NOTES.entries()) {
    timeline.add(at(note.daysBeforeEnd), 'credit note', async (now) => {
      // The newest subscription invoices at that date, skipping a few so notes land on different customers.
      const { rows } = await listInvoices(deps.db, { limit: 50, newestFirst: true }, {});
      const target = newestFirst(
        rows.map((r) => r.invoice),
        customers,
        (inv) => inv.total,
      ).filter(
        (inv) => ['paid', 'issued', 'overdue'].includes(inv.status) && money(inv.total).gt(0) && inv.subscription_id,
      )[i * 3];
      if (!target) return;
      await issueCreditNote(
        deps.db,
        createCreditNoteBody.parse({
          invoiceId: target.id,
          amount: formatMoney(money(target.total).times(note.share), target.currency),
          reason: note.reason,
        }),
        SYSTEM_ACTOR,
        { now },
      );
      counts.creditNotes += 1;
    });
  }

  for (const [i, refund] of REFUNDS.entries()) {
    timeline.add(at(refund.daysBeforeEnd), 'refund', async (now) => {
      const { rows } = await listPayments(deps.db, { limit: 50, newestFirst: true }, {});
      const target = newestFirst(rows, customers, (p) => p.amount).filter(
        (p) => p.status === 'succeeded' && p.payment_method !== 'provider_a',
      )[i * 2 + 1];
      if (!target) return;
      const body = createRefundBody.parse({
        paymentId: target.id,
        amount: formatMoney(money(target.amount).times(refund.share), target.currency),
        reason: refund.reason,
      });
      await createRefund(deps.db, body, SYSTEM_ACTOR, { config: deps.config, now });
      counts.refunds += 1;
    });
  }

  // Late in the year, so its failing deliveries are the last ten days' events rather than a year of them.
  timeline.add(at(10), 'webhook endpoint', async () => {
    const body = createEndpointBody.parse({
      url: FAILING_WEBHOOK_URL,
      events: ['invoice.created', 'invoice.paid', 'invoice.overdue', 'payment.succeeded', 'subscription.canceled'],
    });
    // A loopback receiver is refused unless private destinations are allowed; the demo's one is meant to fail.
    await createEndpoint(deps.db, body, { ...deps.config, WEBHOOK_ALLOW_PRIVATE_URLS: true }, SYSTEM_ACTOR);
    counts.webhookEndpoints += 1;
  });
  return counts;
}

const DEVICES = ['MacBook Pro', 'Studio workstation', 'ThinkPad X1', 'Surface Laptop', 'Mac mini (render)'];

/**
 * A license for every live subscription of the licensed product, created now (licenses take no clock),
 * with devices activated through the same validation as `POST /api/licenses/validate`; one is suspended.
 */
export async function issueLicenses(
  ctx: ExtrasContext,
  catalog: Catalog,
): Promise<{ licenses: number; activations: number }> {
  const { deps } = ctx;
  const planIds = new Set(
    Object.values(catalog.plans)
      .filter((p) => p.product_id === catalog.licensedProductId)
      .map((p) => p.id),
  );
  const names = new Map(ctx.customers.map((c) => [c.id, c.person.name]));
  let licenses = 0;
  let activations = 0;
  for (const planId of planIds) {
    const { rows } = await listSubscriptions(deps.db, { limit: 500 }, { planId });
    for (const sub of rows.filter((s) => s.status !== 'canceled')) {
      const yearly = sub.billing_cycle === 'yearly';
      const license = await createLicense(
        deps.db,
        createLicenseBody.parse({
          customerId: sub.customer_id,
          productId: catalog.licensedProductId,
          maxActivations: yearly ? 5 : 3,
          features: { exportPdf: true, seats: yearly ? 5 : 3, plugins: yearly ? ['git', 'figma', 'jira'] : ['git'] },
          expiresAt: sub.current_period_end.toISOString(),
        }),
        deps.config,
        SYSTEM_ACTOR,
      );
      licenses += 1;
      const devices = ctx.random.int(1, yearly ? 4 : 3);
      for (let d = 0; d < devices; d++) {
        const owner = (names.get(sub.customer_id) ?? 'Customer').split(' ')[0];
        const outcome = await validateLicense(deps.db, {
          licenseKey: license.license_key,
          deviceId: `dev-${license.id.slice(0, 8)}-${d + 1}`,
          deviceName: `${owner}'s ${DEVICES[(licenses + d) % DEVICES.length]}`,
        });
        if (outcome.found && outcome.body.valid === true) activations += 1;
      }
      if (licenses === 3)
        await updateLicense(
          deps.db,
          license.license_key,
          updateLicenseBody.parse({ status: 'suspended' }),
          SYSTEM_ACTOR,
        );
    }
  }
  return { licenses, activations };
}
