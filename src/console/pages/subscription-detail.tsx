/**
 * `/admin/subscriptions/:id` (console.md "operations"): plan, periods, invoices, coupon, events and the audit
 * entries, with the status and cancel-at-period-end actions and the plan chooser that leads to the preview.
 */
import { auditEntriesOf } from '../../audit/service.ts';
import { findCoupon } from '../../coupons/service.ts';
import { customerNames } from '../../customers/service.ts';
import type { Db } from '../../db/knex.ts';
import { listSubscriptionEvents } from '../../events/service.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { invoiceNumbers, listInvoiceSummaries } from '../../invoices/service.ts';
import { findPlans } from '../../plans/service.ts';
import { updateSubscriptionBody } from '../../subscriptions/schema.ts';
import { getSubscription, updateSubscription } from '../../subscriptions/service.ts';
import { AuditTrail } from '../components/AuditTrail.tsx';
import { dateTime } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { field, type FormValues } from '../http/form.ts';
import { askFirst, defineAction, definePage, type PageInput } from '../http/route.ts';
import { TimelineSection } from './customers-sections.tsx';
import { firstPage } from './invoices-filters.tsx';
import { uuidParam } from '../http/params.ts';
import { allPlans, subscriptionUrl } from './subscriptions-parts.tsx';
import { FORMS, Props, Actions, Invoices } from './subscription-detail-parts.tsx';
import { UsageSection } from './subscription-usage.tsx';
import { subscriptionUsage } from '../../usage-api/read.ts';

const EVENT_LIMIT = 100;

/** Everything the page shows, each list one query (C-9). */
async function loadSubscription(db: Db, id: string) {
  const sub = await getSubscription(db, uuidParam(id, 'Subscription'));
  const [names, plans, coupon, invoices, events, audit, usage] = await Promise.all([
    customerNames(db, [sub.customer_id]),
    allPlans(db),
    sub.coupon_id ? findCoupon(db, sub.coupon_id) : undefined,
    listInvoiceSummaries(db, firstPage(), { subscriptionId: sub.id }),
    listSubscriptionEvents(db, { id: sub.id, customerId: sub.customer_id }, EVENT_LIMIT),
    auditEntriesOf(db, 'subscription', sub.id),
    subscriptionUsage(db, sub.id, {}),
  ]);
  const eventInvoices = events.flatMap((e) => (typeof e.data.invoiceId === 'string' ? [e.data.invoiceId] : []));
  const numbers = await invoiceNumbers(db, eventInvoices);
  const plan = plans.find((p) => p.id === sub.plan_id) ?? (await findPlans(db, [sub.plan_id])).get(sub.plan_id)!;
  const customerName = names.get(sub.customer_id);
  return { sub, customerName, plan, plans, coupon, invoices, events, numbers, audit, usage };
}

/** The page, also rendered again with a refused action's error (C-6) or a refused preview's. */
export async function renderSubscriptionPage({ deps, params, viewer, notice, state }: PageInput<unknown>) {
  const data = await loadSubscription(deps.db, params.id!);
  const { sub } = data;
  const who = data.customerName ?? sub.customer_id;
  return (
    <Layout title={`Subscription of ${who}`} viewer={viewer} section="Subscriptions" notice={notice}>
      <p class="crumbs">
        <a href="/admin/subscriptions">Subscriptions</a>
      </p>
      <h1>{`${data.plan.name} for ${who}`}</h1>
      <Props sub={sub} customerName={data.customerName} plan={data.plan} coupon={data.coupon} />
      <h2>Actions</h2>
      <Actions sub={sub} plan={data.plan} plans={data.plans} csrf={viewer.csrf} state={state} />
      <UsageSection usage={data.usage} />
      <Invoices rows={data.invoices.rows} hasMore={data.invoices.hasMore} />
      <TimelineSection id="events" title="Events" rows={data.events} numbers={data.numbers} />
      <AuditTrail rows={data.audit} targetType="subscription" targetId={sub.id} />
    </Layout>
  );
}

export const subscriptionPage = definePage({ path: '/admin/subscriptions/:id', render: renderSubscriptionPage });

/** What a form's `true`/`false` select means; anything else goes through as typed, for the schema to name. */
export function booleanField(form: FormValues, name: string): boolean | string | undefined {
  const value = field(form, name)?.trim();
  return value === 'true' ? true : value === 'false' ? false : value;
}

/** `POST /admin/subscriptions/:id/status`: the API's PUT with `status` (pause, resume, cancel). */
export const subscriptionStatusAction = defineAction({
  path: '/admin/subscriptions/:id/status',
  form: FORMS.status,
  page: subscriptionPage,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Subscription');
    const body = parseOrThrow(updateSubscriptionBody, { status: field(form, 'status') }, 'body');
    const current = await getSubscription(deps.db, id);
    const asked =
      body.status === 'canceled' && current.status !== 'canceled'
        ? askFirst(form, 'Cancelling ends the subscription now: it is not invoiced again and cannot be resumed.')
        : undefined;
    if (asked) return asked;
    const sub = await updateSubscription(deps.db, id, body, actor, { settings: deps.config });
    return { redirect: subscriptionUrl(id), notice: `The subscription is ${sub.status}.` };
  },
});

/** `POST /admin/subscriptions/:id/cancel-at-period-end`: the API's PUT with `cancelAtPeriodEnd`. */
export const cancelAtPeriodEndAction = defineAction({
  path: '/admin/subscriptions/:id/cancel-at-period-end',
  form: FORMS.cancelAtPeriodEnd,
  page: subscriptionPage,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Subscription');
    const body = parseOrThrow(updateSubscriptionBody, { cancelAtPeriodEnd: booleanField(form, 'value') }, 'body');
    const sub = await updateSubscription(deps.db, id, body, actor, { settings: deps.config });
    return {
      redirect: subscriptionUrl(id),
      notice: sub.cancel_at_period_end
        ? `The subscription will cancel at the end of its period, ${dateTime(sub.current_period_end)}.`
        : 'The subscription will renew at the end of its period.',
    };
  },
});

export const subscriptionDetailRoutes = [subscriptionPage, subscriptionStatusAction, cancelAtPeriodEndAction];
