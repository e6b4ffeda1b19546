/**
 * P-4 `Change plan`: the preview of the chosen plan (the credit for what is unused and the charge, computed by the
 * change-plan preview the console shows) with a `Confirm change` button posting the change as previewed (its instant).
 */
import { AppError } from '../errors.ts';
import { Form } from '../console/components/Form.tsx';
import { date, money } from '../console/components/format.ts';
import { field } from '../console/http/form.ts';
import { confirmPortalPlanChange, previewPortalPlanChange } from '../portal/actions.ts';
import type { PlanChangePreview } from '../subscriptions/change-plan.ts';
import { PortalLayout } from './layout.tsx';
import { portalAction, portalPage } from './route.ts';
import { planText, SUBSCRIPTION_FORMS, subscriptionPath } from './subscriptions-parts.tsx';
import { renderSubscription, subscriptionPage } from './subscriptions.tsx';

function Figures({ preview }: { preview: PlanChangePreview }) {
  const m = (v: string) => money(v, preview.newPlan.currency);
  return (
    <dl class="facts">
      <dt>From</dt>
      <dd>{planText(preview.oldPlan)}</dd>
      <dt>To</dt>
      <dd>{planText(preview.newPlan)}</dd>
      <dt>Credit</dt>
      <dd id="credit" data-amount={preview.credit?.amount ?? '0'}>
        {preview.credit ? `${m(preview.credit.amount)} (${preview.credit.description})` : 'None'}
      </dd>
      <dt>Charge now</dt>
      <dd id="charge" data-amount={preview.chargeTotals?.total ?? '0'}>
        {preview.chargeTotals
          ? `${m(preview.chargeTotals.total)} (tax ${m(preview.chargeTotals.taxAmount)} included)`
          : 'None: the new price applies from the next period'}
      </dd>
    </dl>
  );
}

export const changePlanPreviewPage = portalPage({
  path: '/portal/subscriptions/:id/change-plan',
  async render(input) {
    const { deps, params, query, viewer } = input;
    let preview: PlanChangePreview;
    try {
      preview = await previewPortalPlanChange(deps.db, deps.config, viewer.actor, params.id!, query.newPlanId ?? '');
    } catch (error) {
      if (!(error instanceof AppError) || error.code === 'not_found' || error.code === 'forbidden') throw error;
      const state = { name: SUBSCRIPTION_FORMS.changePlan, error, values: query };
      input.ctx.status = 400;
      return renderSubscription({ ...input, state });
    }
    const id = preview.subscription.id;
    return (
      <PortalLayout title="Change plan" viewer={viewer} section="Subscriptions">
        <p class="crumbs">
          <a href={subscriptionPath(id)}>Back to the subscription</a>
        </p>
        <h1>{`Change plan to ${preview.newPlan.name}`}</h1>
        <section class="card">
          <Figures preview={preview} />
          <p class="muted">
            {preview.chargeTotals
              ? 'The charge is invoiced at once; your credit is spent on it first.'
              : `Nothing is charged now; the next invoice, on ${date(preview.subscription.current_period_end)}, ` +
                'bills the new plan.'}
          </p>
          <Form
            name={SUBSCRIPTION_FORMS.changePlan}
            action={`${subscriptionPath(id)}/change-plan`}
            csrf={viewer.csrf}
            submit="Confirm change"
          >
            <input type="hidden" name="newPlanId" value={preview.newPlan.id} />
            <input type="hidden" name="prorationDate" value={preview.at.toISOString()} />
          </Form>
        </section>
      </PortalLayout>
    );
  },
});

/** `POST /portal/subscriptions/:id/change-plan` (newPlanId, prorationDate): `Confirm change`. */
export const changePlanAction = portalAction({
  path: '/portal/subscriptions/:id/change-plan',
  form: SUBSCRIPTION_FORMS.changePlan,
  page: subscriptionPage,
  async run({ deps, params, form, viewer }) {
    const newPlanId = field(form, 'newPlanId')?.trim() ?? '';
    const at = field(form, 'prorationDate');
    if (at && Number.isNaN(Date.parse(at)))
      throw new AppError('invalid_request', 'The preview has expired: choose the plan again', {
        details: [{ path: 'prorationDate', message: 'must be the instant the preview showed' }],
      });
    const prorationDate = at ? new Date(at) : undefined;
    const sub = await confirmPortalPlanChange(deps.db, deps.config, viewer.actor, params.id!, {
      newPlanId,
      prorationDate,
    });
    return { redirect: subscriptionPath(sub.id), notice: 'Your plan is changed.' };
  },
});
