/**
 * What the portal shows (P-3..P-6), every read scoped by the signed-in customer's id here, in the service call, never
 * by the page: another customer's invoice, subscription or license is not found (404), as if it did not exist.
 */
import type { Config } from '../config.ts';
import type { Db } from '../db/knex.ts';
import { notFound } from '../errors.ts';
import { uuid } from '../http/schemas.ts';
import { hostedUrlsOf } from '../invoices/hosted-links.ts';
import { listInvoiceSummaries, openAmountsOfCustomers } from '../invoices/service.ts';
import { getCustomerLicense } from '../licenses/customer-licenses.ts';
import { listLicenses } from '../licenses/service.ts';
import { findPlans, listPlans } from '../plans/service.ts';
import type { PlanRow } from '../plans/repo.ts';
import type { SubscriptionRow } from '../subscriptions/repo.ts';
import { findSubscription, subscriptionsOfCustomers } from '../subscriptions/service.ts';
import { subscriptionUsage } from '../usage-api/read.ts';

export const INVOICES_PAGE_SIZE = 50;
const DEVICES_SHOWN = 200;
const LICENSES_SHOWN = 200;
const PLANS_OFFERED = 100;

/** Subscriptions that still run (and bill): what the overview counts as active. */
const LIVE = new Set(['trialing', 'active', 'past_due', 'paused']);

/** The customer's subscriptions, newest first, each with its plan. */
export async function portalSubscriptions(db: Db, customerId: string) {
  const subs = (await subscriptionsOfCustomers(db, [customerId])).sort(
    (a, b) => b.created_at.getTime() - a.created_at.getTime(),
  );
  const plans = await findPlans(db, [...new Set(subs.map((s) => s.plan_id))]);
  return subs.map((sub) => ({ sub, plan: plans.get(sub.plan_id)! }));
}

/** P-3 Overview: what is owed (per currency), the subscriptions that run, the next invoice's date. */
export async function portalOverview(db: Db, customerId: string) {
  const [owed, subscriptions] = await Promise.all([
    openAmountsOfCustomers(db, [customerId]),
    portalSubscriptions(db, customerId),
  ]);
  const live = subscriptions.filter(({ sub }) => LIVE.has(sub.status));
  // A subscription bills again at its period's end unless it cancels then or is paused.
  const renewals = live
    .filter(({ sub }) => !sub.cancel_at_period_end && sub.status !== 'paused')
    .map(({ sub }) => sub.current_period_end.getTime());
  const nextInvoiceDate = renewals.length > 0 ? new Date(Math.min(...renewals)) : null;
  return { owed: owed.get(customerId) ?? [], live, nextInvoiceDate };
}

/** P-3 Invoices: every invoice the customer was sent (no drafts), newest first, a page at a time, with its links. */
export async function portalInvoices(db: Db, config: Config, customerId: string, startingAfter?: string) {
  const page = await listInvoiceSummaries(
    db,
    { limit: INVOICES_PAGE_SIZE, startingAfter, newestFirst: true },
    { customerId, sentOnly: true },
  );
  return { ...page, urls: await hostedUrlsOf(db, config, page.rows) };
}

/** The customer's subscription, or not_found (another customer's too). */
export async function customerSubscription(db: Db, customerId: string, id: string): Promise<SubscriptionRow> {
  const sub = uuid.safeParse(id).success ? await findSubscription(db, id) : undefined;
  if (!sub || sub.customer_id !== customerId) throw notFound('Subscription');
  return sub;
}

/** P-4: the plans a subscription may change to: active, of the same product, billing cycle and currency. */
export async function changeablePlans(db: Db, current: PlanRow): Promise<PlanRow[]> {
  const { rows } = await listPlans(db, { limit: PLANS_OFFERED }, { productId: current.product_id, active: true });
  return rows.filter(
    (p) => p.id !== current.id && p.billing_cycle === current.billing_cycle && p.currency === current.currency,
  );
}

/** P-4: a subscription's page: its plan, the plans it may change to, and its usage this period (U-9). */
export async function portalSubscription(db: Db, customerId: string, id: string) {
  const sub = await customerSubscription(db, customerId, id);
  const plan = (await findPlans(db, [sub.plan_id])).get(sub.plan_id)!;
  const [plans, usage] = await Promise.all([changeablePlans(db, plan), subscriptionUsage(db, sub.id, { customerId })]);
  return { sub, plan, plans, usage: usage.charges.length > 0 ? usage : null };
}

/** P-5: the customer's licenses, newest first. */
export async function portalLicenses(db: Db, customerId: string) {
  return (await listLicenses(db, { limit: LICENSES_SHOWN, newestFirst: true }, { customerId })).rows;
}

/** P-5: one of the customer's licenses with its devices. */
export function portalLicense(db: Db, customerId: string, id: string) {
  if (!uuid.safeParse(id).success) throw notFound('License');
  return getCustomerLicense(db, customerId, id, DEVICES_SHOWN);
}
