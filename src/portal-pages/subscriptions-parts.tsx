import { Field, Form, type FormState } from '../console/components/Form.tsx';
import { date, money } from '../console/components/format.ts';
import type { PlanRow } from '../plans/repo.ts';
import type { SubscriptionRow } from '../subscriptions/repo.ts';
import type { PortalViewer } from './viewer.ts';

export const STATUS_TEXT: Record<SubscriptionRow['status'], string> = {
  trialing: 'Trialing',
  active: 'Active',
  past_due: 'Past due',
  paused: 'Paused',
  canceled: 'Canceled',
};

export const SUBSCRIPTION_FORMS = { cancel: 'cancel', keep: 'keep', changePlan: 'change-plan' } as const;

export const subscriptionPath = (id: string) => `/portal/subscriptions/${id}`;

export const planText = (plan: PlanRow) =>
  `${plan.name} · ${money(plan.base_price, plan.currency)} / ${plan.billing_cycle}`;

/** The subscription's facts in words. */
export function SubscriptionFacts({ sub, plan }: { sub: SubscriptionRow; plan: PlanRow }) {
  return (
    <dl class="facts">
      <dt>Plan</dt>
      <dd>{planText(plan)}</dd>
      <dt>Status</dt>
      <dd>{STATUS_TEXT[sub.status]}</dd>
      <dt>Current period</dt>
      <dd>{`${date(sub.current_period_start)} – ${date(sub.current_period_end)}`}</dd>
      {sub.trial_end ? (
        <>
          <dt>Trial ends</dt>
          <dd>{date(sub.trial_end)}</dd>
        </>
      ) : null}
      <dt>Renews</dt>
      <dd>
        {sub.status === 'canceled'
          ? `No: canceled ${date(sub.canceled_at)}`
          : sub.cancel_at_period_end
            ? `No: ends on ${date(sub.current_period_end)}`
            : sub.status === 'paused'
              ? 'Not while paused'
              : `Yes, on ${date(sub.current_period_end)}`}
      </dd>
    </dl>
  );
}

/** P-4: `Cancel at period end` or, once asked, `Keep subscription`; none when `cancel` is switched off (P-7). */
export function CancelControls({
  sub,
  viewer,
  state,
}: {
  sub: SubscriptionRow;
  viewer: PortalViewer;
  state?: FormState | undefined;
}) {
  if (!viewer.features.has('cancel') || sub.status === 'canceled') return null;
  return sub.cancel_at_period_end ? (
    <Form
      name={SUBSCRIPTION_FORMS.keep}
      action={`${subscriptionPath(sub.id)}/keep`}
      csrf={viewer.csrf}
      state={state}
      submit="Keep subscription"
    >
      <p>{`Your subscription ends on ${date(sub.current_period_end)}. Keep it to renew as before.`}</p>
    </Form>
  ) : (
    <Form
      name={SUBSCRIPTION_FORMS.cancel}
      action={`${subscriptionPath(sub.id)}/cancel`}
      csrf={viewer.csrf}
      state={state}
      submit="Cancel at period end"
    >
      <p>{`Cancelling at period end keeps it active until ${date(sub.current_period_end)}, then it ends.`}</p>
    </Form>
  );
}

/** P-4: the plans it may change to, leading to the preview; none when `change_plan` is switched off (P-7). */
export function ChangePlanChooser({
  sub,
  plans,
  viewer,
  state,
}: {
  sub: SubscriptionRow;
  plans: PlanRow[];
  viewer: PortalViewer;
  state?: FormState | undefined;
}) {
  if (!viewer.features.has('change_plan') || sub.status === 'canceled') return null;
  if (plans.length === 0) return <p class="empty">No other plan is available for this subscription.</p>;
  const mine = state?.name === SUBSCRIPTION_FORMS.changePlan ? state : undefined;
  return (
    <form method="get" action={`${subscriptionPath(sub.id)}/change-plan`} class="form">
      {mine?.error ? (
        <div class="error" id="refused">
          <p>
            <strong>{mine.error.message}</strong>
          </p>
        </div>
      ) : null}
      <Field
        label="New plan"
        name="newPlanId"
        options={plans.map((p) => p.id)}
        labels={Object.fromEntries(plans.map((p) => [p.id, planText(p)]))}
        state={mine}
      />
      <button type="submit">Change plan</button>
    </form>
  );
}
