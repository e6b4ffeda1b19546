/**
 * `/portal/subscriptions` and `/portal/subscriptions/:id` (P-4): the customer's subscriptions; on one, its facts,
 * `Cancel at period end` / `Keep subscription`, `Change plan` (the preview, then `Confirm change`) and its usage this
 * period (U-9) when its plan has charges.
 */
import { date, money } from '../console/components/format.ts';
import { Table } from '../console/components/Table.tsx';
import { TierList } from '../console/pages/subscription-usage.tsx';
import { setCancelAtPeriodEnd } from '../portal/actions.ts';
import { portalSubscription, portalSubscriptions } from '../portal/records.ts';
import type { PeriodUsage } from '../usage/read.ts';
import { PortalLayout } from './layout.tsx';
import { portalAction, portalPage, type PortalPageInput } from './route.ts';
import {
  CancelControls,
  ChangePlanChooser,
  STATUS_TEXT,
  SUBSCRIPTION_FORMS,
  SubscriptionFacts,
  subscriptionPath,
} from './subscriptions-parts.tsx';

export const subscriptionsPage = portalPage({
  path: '/portal/subscriptions',
  async render({ deps, viewer, notice }) {
    const subs = await portalSubscriptions(deps.db, viewer.customerId);
    return (
      <PortalLayout title="Subscriptions" viewer={viewer} section="Subscriptions" notice={notice}>
        <h1>Subscriptions</h1>
        <Table
          rows={subs}
          stack
          empty="No subscriptions."
          columns={[
            { header: 'Plan', cell: ({ sub, plan }) => <a href={subscriptionPath(sub.id)}>{plan.name}</a> },
            { header: 'Status', cell: ({ sub }) => STATUS_TEXT[sub.status] },
            { header: 'Price', numeric: true, cell: ({ plan }) => money(plan.base_price, plan.currency) },
            {
              header: 'Renews',
              cell: ({ sub }) =>
                sub.status === 'canceled'
                  ? '—'
                  : sub.cancel_at_period_end
                    ? `Ends ${date(sub.current_period_end)}`
                    : date(sub.current_period_end),
            },
          ]}
        />
      </PortalLayout>
    );
  },
});

function UsageTable({ usage }: { usage: PeriodUsage }) {
  return (
    <section class="card" id="usage" aria-labelledby="usage-h">
      <h2 id="usage-h">Usage this period</h2>
      <p class="muted">
        {`${date(usage.periodStart)} to ${date(usage.periodEnd)}: ` +
          `${money(usage.amount.toString(), usage.currency)} so far, billed when the period ends.`}
      </p>
      <Table
        rows={usage.charges}
        stack
        empty="No usage charges."
        columns={[
          { header: 'Metric', cell: (c) => c.metricCode },
          { header: 'Quantity', numeric: true, cell: (c) => c.quantity },
          { header: 'Amount', numeric: true, cell: (c) => money(c.amount.toString(), usage.currency) },
          ...(usage.charges.some((c) => c.tiers.length > 0)
            ? [
                {
                  header: 'Tiers',
                  cell: (c: PeriodUsage['charges'][number]) => <TierList tiers={c.tiers} currency={usage.currency} />,
                },
              ]
            : []),
        ]}
      />
    </section>
  );
}

export async function renderSubscription({ deps, params, viewer, notice, state }: PortalPageInput) {
  const { sub, plan, plans, usage } = await portalSubscription(deps.db, viewer.customerId, params.id!);
  return (
    <PortalLayout title={plan.name} viewer={viewer} section="Subscriptions" notice={notice}>
      <p class="crumbs">
        <a href="/portal/subscriptions">Subscriptions</a>
      </p>
      <h1>{plan.name}</h1>
      <section class="card">
        <SubscriptionFacts sub={sub} plan={plan} />
        <CancelControls sub={sub} viewer={viewer} state={state} />
      </section>
      {viewer.features.has('change_plan') && sub.status !== 'canceled' ? (
        <section class="card" aria-labelledby="change-h">
          <h2 id="change-h">Change plan</h2>
          <ChangePlanChooser sub={sub} plans={plans} viewer={viewer} state={state} />
        </section>
      ) : null}
      {usage ? <UsageTable usage={usage} /> : null}
    </PortalLayout>
  );
}

export const subscriptionPage = portalPage({ path: '/portal/subscriptions/:id', render: renderSubscription });

/** `POST /portal/subscriptions/:id/cancel`: `Cancel at period end` (no field). */
export const cancelAction = portalAction({
  path: '/portal/subscriptions/:id/cancel',
  form: SUBSCRIPTION_FORMS.cancel,
  page: subscriptionPage,
  async run({ deps, params, viewer }) {
    const sub = await setCancelAtPeriodEnd(deps.db, viewer.actor, params.id!, true);
    return {
      redirect: subscriptionPath(sub.id),
      notice: `Your subscription will end on ${date(sub.current_period_end)}.`,
    };
  },
});

/** `POST /portal/subscriptions/:id/keep`: `Keep subscription`, the undo. */
export const keepAction = portalAction({
  path: '/portal/subscriptions/:id/keep',
  form: SUBSCRIPTION_FORMS.keep,
  page: subscriptionPage,
  async run({ deps, params, viewer }) {
    const sub = await setCancelAtPeriodEnd(deps.db, viewer.actor, params.id!, false);
    return { redirect: subscriptionPath(sub.id), notice: 'Your subscription will renew as before.' };
  },
});
