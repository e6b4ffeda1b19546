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
import { amountDue } from '../../pricing/amount-due.ts';
import { invoiceNumbers, listInvoiceSummaries } from '../../invoices/service.ts';
import { findPlans } from '../../plans/service.ts';
import { SETTABLE_STATUSES, updateSubscriptionBody } from '../../subscriptions/schema.ts';
import { getSubscription, updateSubscription } from '../../subscriptions/service.ts';
import { AuditTrail } from '../components/AuditTrail.tsx';
import { ErrorBox, Field, Form, kept, type FormState } from '../components/Form.tsx';
import { date, dateTime, money } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { Table } from '../components/Table.tsx';
import { field, type FormValues } from '../http/form.ts';
import { defineAction, definePage, type PageInput } from '../http/route.ts';
import { TimelineSection } from './customers-sections.tsx';
import { firstPage } from './invoices-filters.tsx';
import { uuidParam } from '../http/params.ts';
import {
  allPlans,
  Period,
  planLabel,
  PlanSelect,
  StatusBadge,
  subscriptionUrl,
  type CouponRow,
  type PlanRow,
  type SubscriptionRow,
} from './subscriptions-parts.tsx';

export const FORMS = {
  status: 'status',
  cancelAtPeriodEnd: 'cancel-at-period-end',
  changePlan: 'change-plan',
} as const;

const EVENT_LIMIT = 100;

type InvoiceRow = Awaited<ReturnType<typeof listInvoiceSummaries>>['rows'][number];

/** Everything the page shows, each list one query (C-9). */
async function loadSubscription(db: Db, id: string) {
  const sub = await getSubscription(db, uuidParam(id, 'Subscription'));
  const [names, plans, coupon, invoices, events, audit] = await Promise.all([
    customerNames(db, [sub.customer_id]),
    allPlans(db),
    sub.coupon_id ? findCoupon(db, sub.coupon_id) : undefined,
    listInvoiceSummaries(db, firstPage(), { subscriptionId: sub.id }),
    listSubscriptionEvents(db, { id: sub.id, customerId: sub.customer_id }, EVENT_LIMIT),
    auditEntriesOf(db, 'subscription', sub.id),
  ]);
  const eventInvoices = events.flatMap((e) => (typeof e.data.invoiceId === 'string' ? [e.data.invoiceId] : []));
  const numbers = await invoiceNumbers(db, eventInvoices);
  const plan = plans.find((p) => p.id === sub.plan_id) ?? (await findPlans(db, [sub.plan_id])).get(sub.plan_id)!;
  return { sub, customerName: names.get(sub.customer_id), plan, plans, coupon, invoices, events, numbers, audit };
}

/** A coupon's terms as a person reads them: what it takes off, for how long, how much is used. */
function couponTerms(coupon: CouponRow, cyclesUsed: number): string {
  const off =
    coupon.percent_off !== null
      ? `${coupon.percent_off}% off`
      : `${money(coupon.amount_off ?? '0', coupon.currency ?? '')} off`;
  const length =
    coupon.duration === 'repeating'
      ? `for ${coupon.duration_in_cycles} invoices`
      : coupon.duration === 'once'
        ? 'once'
        : 'forever';
  return `${coupon.code}: ${off} ${length}; used on ${cyclesUsed} invoice${cyclesUsed === 1 ? '' : 's'}`;
}

function Props({
  sub,
  customerName,
  plan,
  coupon,
}: {
  sub: SubscriptionRow;
  customerName?: string;
  plan: PlanRow;
  coupon?: CouponRow;
}) {
  return (
    <dl class="props">
      <dt>Customer</dt>
      <dd>
        <a href={`/admin/customers/${sub.customer_id}`}>{customerName ?? sub.customer_id}</a>
      </dd>
      <dt>Plan</dt>
      <dd>{planLabel(plan)}</dd>
      <dt>Status</dt>
      <dd>
        <StatusBadge value={sub.status} />
      </dd>
      <dt>Billing cycle</dt>
      <dd>{sub.billing_cycle}</dd>
      <dt>Current period</dt>
      <dd>
        <Period sub={sub} />
      </dd>
      <dt>Billing anchor</dt>
      <dd>{dateTime(sub.billing_anchor)}</dd>
      <dt>Trial end</dt>
      <dd>{dateTime(sub.trial_end) || '—'}</dd>
      <dt>Cancels at period end</dt>
      <dd>{sub.cancel_at_period_end ? `yes, on ${dateTime(sub.current_period_end)}` : 'no'}</dd>
      {sub.paused_at ? (
        <>
          <dt>Paused</dt>
          <dd>{dateTime(sub.paused_at)}</dd>
        </>
      ) : null}
      {sub.canceled_at ? (
        <>
          <dt>Canceled</dt>
          <dd>{dateTime(sub.canceled_at)}</dd>
        </>
      ) : null}
      <dt>Coupon</dt>
      <dd>{coupon ? couponTerms(coupon, sub.coupon_cycles_used) : '—'}</dd>
      <dt>Created</dt>
      <dd>{dateTime(sub.created_at)}</dd>
      <dt>ID</dt>
      <dd>
        <code>{sub.id}</code>
      </dd>
    </dl>
  );
}

/** The plan chooser (a GET form): it leads to the preview, which holds the form that changes the plan. */
function ChangePlanChooser({
  sub,
  plan,
  plans,
  state,
}: {
  sub: SubscriptionRow;
  plan: PlanRow;
  plans: PlanRow[];
  state?: FormState;
}) {
  const mine = state?.name === FORMS.changePlan ? state : undefined;
  const choices = plans.filter((p) => p.active && p.currency === plan.currency && p.id !== plan.id);
  return (
    <details open={mine ? true : undefined}>
      <summary>Change plan</summary>
      <form method="get" action={`${subscriptionUrl(sub.id)}/change-plan`} class="form">
        {mine ? <ErrorBox state={mine} /> : null}
        {choices.length === 0 ? <p class="empty">{`No other active plan in ${plan.currency}.`}</p> : null}
        <PlanSelect
          id="change-plan-new"
          name="newPlanId"
          label="New plan"
          plans={choices}
          value={kept(mine, FORMS.changePlan, 'newPlanId')}
        />
        <Field
          label="Prorate"
          name="prorate"
          options={['true', 'false']}
          value={kept(mine, FORMS.changePlan, 'prorate', 'true')}
        />
        <button type="submit">Preview the change</button>
      </form>
    </details>
  );
}

function Actions({
  sub,
  plan,
  plans,
  csrf,
  state,
}: {
  sub: SubscriptionRow;
  plan: PlanRow;
  plans: PlanRow[];
  csrf: string;
  state?: FormState;
}) {
  if (sub.status === 'canceled' && !state) return <p class="empty">A canceled subscription takes no actions.</p>;
  const status = state?.name === FORMS.status ? state : undefined;
  const flag = state?.name === FORMS.cancelAtPeriodEnd ? state : undefined;
  return (
    <div class="actions">
      <details open={status ? true : undefined}>
        <summary>Pause, resume or cancel</summary>
        <Form
          name={FORMS.status}
          action={`${subscriptionUrl(sub.id)}/status`}
          csrf={csrf}
          state={status}
          submit="Change status"
        >
          <Field
            label="New status"
            name="status"
            options={SETTABLE_STATUSES}
            value={kept(status, FORMS.status, 'status', sub.status === 'paused' ? 'active' : 'paused')}
            state={status}
          />
        </Form>
      </details>
      <details open={flag ? true : undefined}>
        <summary>Cancel at period end</summary>
        <Form
          name={FORMS.cancelAtPeriodEnd}
          action={`${subscriptionUrl(sub.id)}/cancel-at-period-end`}
          csrf={csrf}
          state={flag}
          submit="Save"
        >
          <Field
            label="Cancel at the end of the current period"
            name="value"
            options={['true', 'false']}
            value={kept(flag, FORMS.cancelAtPeriodEnd, 'value', String(!sub.cancel_at_period_end))}
            state={flag}
          />
        </Form>
      </details>
      <ChangePlanChooser sub={sub} plan={plan} plans={plans} state={state} />
    </div>
  );
}

function Invoices({ rows, hasMore }: { rows: InvoiceRow[]; hasMore: boolean }) {
  return (
    <section id="invoices" class="wide" aria-labelledby="invoices-h">
      <h2 id="invoices-h">Invoices</h2>
      <Table
        rows={rows}
        empty="No invoices yet."
        columns={[
          {
            header: 'Number',
            cell: (i: InvoiceRow) => (
              <a class="nowrap" href={`/admin/invoices/${i.id}`}>
                {i.invoice_number}
              </a>
            ),
          },
          {
            header: 'Period',
            cell: (i) => (i.period_start ? `${date(i.period_start)} – ${date(i.period_end)}` : 'proration'),
          },
          { header: 'Status', cell: (i) => <StatusBadge value={i.status} /> },
          { header: 'Total', numeric: true, cell: (i) => money(i.total, i.currency) },
          { header: 'Amount due', numeric: true, cell: (i) => money(amountDue(i).toString(), i.currency) },
          { header: 'Created', cell: (i) => dateTime(i.created_at) },
        ]}
      />
      {hasMore ? <p class="more">Showing the newest 50 invoices.</p> : null}
    </section>
  );
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
