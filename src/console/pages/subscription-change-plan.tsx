/**
 * Changing a subscription's plan from the console (console.md "operations"): a preview page showing the
 * credit and the charge the change would create, computed by the subscriptions domain's `planChange` (the
 * same function the change itself runs), then a form posting the change. The form carries the preview's
 * instant (`prorationDate`), so the change credits and charges exactly what was shown.
 */
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { changePlan, previewPlanChange, type PlanChangePreview } from '../../subscriptions/change-plan.ts';
import { findPlans } from '../../plans/service.ts';
import { changePlanBody } from '../../subscriptions/schema.ts';
import { Form } from '../components/Form.tsx';
import { withRefusal } from '../components/Refusal.tsx';
import { date, dateTime, money } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { Table } from '../components/Table.tsx';
import { field } from '../http/form.ts';
import { defineAction, definePage } from '../http/route.ts';
import { uuidParam } from '../http/params.ts';
import { booleanField, renderSubscriptionPage, subscriptionPage } from './subscription-detail.tsx';
import { FORMS } from './subscription-detail-parts.tsx';
import { planLabel, subscriptionUrl } from './subscriptions-parts.tsx';

const previewQuery = z.object({ newPlanId: z.string().optional(), prorate: z.string().optional() });

/** The chooser's query as the API's body; a refusal names the field as the API would. */
function previewBody(query: z.output<typeof previewQuery>) {
  return parseOrThrow(
    changePlanBody,
    {
      newPlanId: query.newPlanId,
      prorate:
        query.prorate === undefined
          ? undefined
          : query.prorate === 'true'
            ? true
            : query.prorate === 'false'
              ? false
              : query.prorate,
    },
    'body',
  );
}

/** What the subscription's fields become, in words. */
function Outcome({ preview }: { preview: PlanChangePreview }) {
  const { subscription: sub, changes, newPlan } = preview;
  const newPeriod = changes.current_period_start && changes.current_period_end;
  return (
    <dl class="props">
      <dt>From</dt>
      <dd>{planLabel(preview.oldPlan)}</dd>
      <dt>To</dt>
      <dd>{planLabel(newPlan)}</dd>
      <dt>Prorated</dt>
      <dd>{preview.credit || preview.charge ? 'yes' : 'no'}</dd>
      <dt>As of</dt>
      <dd>{dateTime(preview.at)}</dd>
      <dt>Billing period</dt>
      <dd>
        {newPeriod
          ? `restarts now: ${date(changes.current_period_start)} – ${date(changes.current_period_end)}, ` +
            `${newPlan.billing_cycle}`
          : changes.billing_anchor
            ? `${newPlan.billing_cycle} periods start on ${date(changes.billing_anchor)}`
            : `unchanged: ${date(sub.current_period_start)} – ${date(sub.current_period_end)}`}
      </dd>
      {!preview.charge ? (
        <>
          <dt>New price billed</dt>
          <dd>
            {sub.status === 'trialing'
              ? 'when the trial ends'
              : `from the next period, ${date(changes.billing_anchor ?? sub.current_period_end)}`}
          </dd>
        </>
      ) : null}
    </dl>
  );
}

function Figures({ preview }: { preview: PlanChangePreview }) {
  const currency = preview.newPlan.currency;
  const m = (v: string) => money(v, currency);
  const { credit, invoiceLines, chargeTotals } = preview;
  return (
    <>
      <h2>Credit</h2>
      {credit ? (
        <dl class="props amounts" id="credit">
          <dt>{credit.description}</dt>
          <dd class="num" data-amount={credit.amount}>
            {m(credit.amount)}
          </dd>
        </dl>
      ) : (
        <p class="empty">No credit: nothing unused is paid for on the current plan.</p>
      )}
      <h2>Charge</h2>
      {chargeTotals ? (
        <>
          <div class="wide">
            <Table
              rows={invoiceLines}
              empty="No lines."
              columns={[
                { header: 'Description', cell: (l) => l.description },
                { header: 'Quantity', numeric: true, cell: (l) => String(l.quantity) },
                { header: 'Unit price', numeric: true, cell: (l) => m(String(l.unitPrice)) },
              ]}
            />
          </div>
          <dl class="props amounts" id="charge">
            <dt>Subtotal</dt>
            <dd class="num" data-amount={chargeTotals.subtotal}>
              {m(chargeTotals.subtotal)}
            </dd>
            <dt>{`Tax (${chargeTotals.taxRate}%)`}</dt>
            <dd class="num" data-amount={chargeTotals.taxAmount}>
              {m(chargeTotals.taxAmount)}
            </dd>
            <dt>
              <strong>Invoice total</strong>
            </dt>
            <dd class="num" data-amount={chargeTotals.total}>
              <strong>{m(chargeTotals.total)}</strong>
            </dd>
          </dl>
          <p class="muted">
            The invoice is issued at once; the customer's store credit, this credit included, is spent on it first.
          </p>
        </>
      ) : (
        <p class="empty">No charge now.</p>
      )}
    </>
  );
}

/**
 * `/admin/subscriptions/:id/change-plan?newPlanId=&prorate=`: the preview. A change the service would refuse
 * (same plan, unknown or inactive plan, another currency, a canceled subscription) shows the subscription's
 * page with the refusal beside the plan chooser, as a refused action does (C-6).
 */
export const changePlanPreviewPage = definePage({
  path: '/admin/subscriptions/:id/change-plan',
  query: previewQuery,
  async render(input) {
    const { deps, params, query, viewer } = input;
    const id = uuidParam(params.id, 'Subscription');
    let preview: PlanChangePreview;
    let body: ReturnType<typeof previewBody>;
    try {
      body = previewBody(query);
      preview = await previewPlanChange(deps.db, id, body, { settings: deps.config });
    } catch (error) {
      if (!(error instanceof AppError) || error.code === 'not_found') throw error;
      const state = { name: FORMS.changePlan, error, values: query as Record<string, string> };
      return withRefusal(error, await renderSubscriptionPage({ ...input, state }));
    }
    return (
      <Layout title="Change plan: preview" viewer={viewer} section="Subscriptions">
        <p class="crumbs">
          <a href="/admin/subscriptions">Subscriptions</a> · <a href={subscriptionUrl(id)}>This subscription</a>
        </p>
        <h1>{`Change plan to ${preview.newPlan.name}`}</h1>
        <Outcome preview={preview} />
        <Figures preview={preview} />
        <Form
          name={FORMS.changePlan}
          action={`${subscriptionUrl(id)}/change-plan`}
          csrf={viewer.csrf}
          submit="Change plan"
        >
          <input type="hidden" name="newPlanId" value={preview.newPlan.id} />
          <input type="hidden" name="prorate" value={String(body.prorate)} />
          <input type="hidden" name="prorationDate" value={preview.at.toISOString()} />
        </Form>
        <p>
          <a href={subscriptionUrl(id)}>Cancel and go back</a>
        </p>
      </Layout>
    );
  },
});

/**
 * `POST /admin/subscriptions/:id/change-plan` (newPlanId, prorate, and the preview's prorationDate): the API's
 * change-plan.
 */
export const changePlanAction = defineAction({
  path: '/admin/subscriptions/:id/change-plan',
  form: FORMS.changePlan,
  page: subscriptionPage,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Subscription');
    const body = parseOrThrow(
      changePlanBody,
      {
        newPlanId: field(form, 'newPlanId')?.trim(),
        prorate: booleanField(form, 'prorate'),
        prorationDate: field(form, 'prorationDate')?.trim(),
      },
      'body',
    );
    const sub = await changePlan(deps.db, id, body, actor, { settings: deps.config });
    const plan = (await findPlans(deps.db, [sub.plan_id])).get(sub.plan_id);
    return { redirect: subscriptionUrl(id), notice: `Plan changed to ${plan?.name ?? sub.plan_id}.` };
  },
});

export const changePlanRoutes = [changePlanPreviewPage, changePlanAction];
