/**
 * The parts of a subscription's page (subscription-detail.tsx): its properties, the status and plan actions, the
 * plan chooser and its invoices; the forms' names, which the change-plan preview shares.
 */
import { amountDue } from '../../pricing/amount-due.ts';
import type { listInvoiceSummaries } from '../../invoices/service.ts';
import { SETTABLE_STATUSES } from '../../subscriptions/schema.ts';
import { ErrorBox, Field, Form, kept, type FormState } from '../components/Form.tsx';
import { date, dateTime, money } from '../components/format.ts';
import { Table } from '../components/Table.tsx';
import {
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

type InvoiceRow = Awaited<ReturnType<typeof listInvoiceSummaries>>['rows'][number];
/** A coupon's terms as a person reads them: what it takes off, for how long, how much is used. */
export function couponTerms(coupon: CouponRow, cyclesUsed: number): string {
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

export function Props({
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
export function ChangePlanChooser({
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

export function Actions({
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

export function Invoices({ rows, hasMore }: { rows: InvoiceRow[]; hasMore: boolean }) {
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
