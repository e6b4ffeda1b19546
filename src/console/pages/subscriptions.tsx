import { z } from 'zod';
import { customerNames } from '../../customers/service.ts';
import type { Db } from '../../db/knex.ts';
import { uuid } from '../../http/schemas.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { findPlans } from '../../plans/service.ts';
import { createSubscriptionBody, SUBSCRIPTION_STATUSES } from '../../subscriptions/schema.ts';
import { createSubscription, listSubscriptions, SUBSCRIPTION_SORT_KEYS } from '../../subscriptions/service.ts';
import { Field, Form, kept, type FormState } from '../components/Form.tsx';
import { date } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { field, type FormValues } from '../http/form.ts';
import { createFormQuery, createFormUrl } from '../http/params.ts';
import { defineAction, definePage } from '../http/route.ts';
import { sortField } from '../http/sort.ts';
import { CustomerIdFilter, listOrder, SortProblem, StatusFilter } from './list-helpers.tsx';
import { firstPage } from './invoices-filters.tsx';
import { Nowrap } from './customers-parts.tsx';
import { changePlanRoutes } from './subscription-change-plan.tsx';
import { subscriptionDetailRoutes } from './subscription-detail.tsx';
import {
  allPlans,
  Period,
  PlanSelect,
  StatusBadge,
  subscriptionUrl,
  type PlanRow,
  type SubscriptionRow,
} from './subscriptions-parts.tsx';

const CREATE_FORM = 'create-subscription';

const listQuery = z.object({
  status: z.enum(SUBSCRIPTION_STATUSES).optional(),
  customerId: uuid.optional(),
  planId: uuid.optional(),
  startingAfter: uuid.optional(),
  ...sortField,
});
type ListFilters = Omit<z.output<typeof listQuery>, 'startingAfter' | 'sort'>;

/** The list's sortable columns by key (C-15), as their headers read. */
const SORT_LABELS = {
  status: 'Status',
  cycle: 'Cycle',
  currentPeriodEnd: 'Current period',
  trialEnd: 'Trial end',
  createdAt: 'Created',
};
/** The list's filters, and `create` (the page opens its create form, started with the filter's customer). */
const pageQuery = listQuery.extend(createFormQuery.shape);

/**
 * The form as the API's JSON body. The console asks for no billing cycle: the plan fixes it (D-41), so the
 * body carries the chosen plan's. For a plan that does not exist any cycle does: the service refuses the
 * plan (plan_not_found) before it compares cycles.
 */
async function createBodyOf(db: Db, form: FormValues) {
  const planId = field(form, 'planId')?.trim();
  const plan = planId && uuid.safeParse(planId).success ? (await findPlans(db, [planId])).get(planId) : undefined;
  const trialDays = field(form, 'trialDays')?.trim();
  return {
    customerId: field(form, 'customerId')?.trim(),
    planId,
    billingCycle: plan?.billing_cycle ?? 'monthly',
    // Number() keeps a non-number as NaN so the schema names the field.
    trialDays: trialDays === undefined ? undefined : Number(trialDays),
    couponCode: field(form, 'couponCode')?.trim(),
  };
}

/** This page with its create form open and started for a customer (the customer page's "New subscription"). */
export const newSubscriptionUrl = (customerId: string) =>
  createFormUrl('/admin/subscriptions', CREATE_FORM, customerId);

function CreateForm({
  csrf,
  state,
  plans,
  customerId,
  open,
}: {
  csrf: string;
  state?: FormState;
  plans: PlanRow[];
  customerId?: string;
  open: boolean;
}) {
  const mine = state?.name === CREATE_FORM ? state : undefined;
  const v = (name: string, fallback = '') => kept(mine, CREATE_FORM, name, fallback);
  const active = plans.filter((p) => p.active);
  return (
    <details id={CREATE_FORM} open={mine || open ? true : undefined}>
      <summary>New subscription</summary>
      <Form name={CREATE_FORM} action="/admin/subscriptions" csrf={csrf} state={mine} submit="Create subscription">
        <Field label="Customer ID" name="customerId" value={v('customerId', customerId ?? '')} state={mine} />
        <PlanSelect id="create-plan" name="planId" label="Plan" plans={active} value={v('planId')} />
        <Field label="Trial days" name="trialDays" type="number" value={v('trialDays')} state={mine} />
        <Field label="Coupon code" name="couponCode" value={v('couponCode')} state={mine} />
      </Form>
    </details>
  );
}

function FilterForm({ values, plans, sort }: { values: ListFilters; plans: PlanRow[]; sort?: string }) {
  return (
    <form method="get" action="/admin/subscriptions" class="filters">
      <StatusFilter statuses={SUBSCRIPTION_STATUSES} value={values.status} />
      <CustomerIdFilter value={values.customerId} />
      <PlanSelect id="filter-plan" name="planId" label="Plan" plans={plans} value={values.planId} empty="Any" />
      {sort ? <input type="hidden" name="sort" value={sort} /> : null}
      <button type="submit">Filter</button>
    </form>
  );
}

/** `/admin/subscriptions?status=&customerId=&planId=`: newest first, by cursor (C-4). */
export const subscriptionsPage = definePage({
  path: '/admin/subscriptions',
  query: pageQuery,
  async render({ deps, query, viewer, notice, state }) {
    const filters: ListFilters = { status: query.status, customerId: query.customerId, planId: query.planId };
    const order = listOrder('/admin/subscriptions', filters, {
      sort: query.sort,
      keys: SUBSCRIPTION_SORT_KEYS,
      labels: SORT_LABELS,
    });
    const [{ rows, hasMore }, plans] = await Promise.all([
      listSubscriptions(deps.db, { ...firstPage(query.startingAfter), sort: order.sort }, filters),
      allPlans(deps.db),
    ]);
    const names = await customerNames(
      deps.db,
      rows.map((s) => s.customer_id),
    );
    const planById = new Map(plans.map((p) => [p.id, p]));
    const filtered = Object.values(filters).some(Boolean);
    return (
      <Layout title="Subscriptions" viewer={viewer} section="Subscriptions" notice={notice}>
        <h1>Subscriptions</h1>
        <CreateForm
          csrf={viewer.csrf}
          state={state}
          plans={plans}
          customerId={query.customerId}
          open={query.create !== undefined}
        />
        <FilterForm values={filters} plans={plans} sort={query.sort} />
        <SortProblem problem={order.problem} />
        <div class="wide words">
          <Table
            rows={rows}
            empty={filtered ? 'No subscriptions match these filters.' : 'No subscriptions yet.'}
            next={nextPageUrl('/admin/subscriptions', order.pageParams, rows.at(-1)?.id, hasMore)}
            sorting={order.sorting}
            stack
            columns={[
              {
                header: 'Customer',
                cell: (s: SubscriptionRow) => (
                  <a href={`/admin/customers/${s.customer_id}`}>{names.get(s.customer_id) ?? s.customer_id}</a>
                ),
              },
              {
                header: 'Plan',
                cell: (s) => <a href={subscriptionUrl(s.id)}>{planById.get(s.plan_id)?.name ?? s.plan_id}</a>,
              },
              { header: 'Status', sort: 'status', cell: (s) => <StatusBadge value={s.status} /> },
              { header: 'Cycle', sort: 'cycle', cell: (s) => <Nowrap>{s.billing_cycle}</Nowrap> },
              { header: 'Current period', sort: 'currentPeriodEnd', cell: (s) => <Period sub={s} /> },
              { header: 'Trial end', sort: 'trialEnd', cell: (s) => <Nowrap>{date(s.trial_end)}</Nowrap> },
              { header: 'Cancels at period end', cell: (s) => (s.cancel_at_period_end ? 'yes' : 'no') },
            ]}
          />
        </div>
      </Layout>
    );
  },
});

/** `POST /admin/subscriptions`: the API's create, the same schema and service. */
export const createSubscriptionAction = defineAction({
  path: '/admin/subscriptions',
  form: CREATE_FORM,
  page: subscriptionsPage,
  async run({ deps, form, actor }) {
    const body = parseOrThrow(createSubscriptionBody, await createBodyOf(deps.db, form), 'body');
    const created = await createSubscription(deps.db, body, actor, { settings: deps.config });
    const trial = created.status === 'trialing' ? `, trialing until ${date(created.trial_end)}` : '';
    return { redirect: subscriptionUrl(created.id), notice: `Subscription created (${created.status}${trial}).` };
  },
});

export const subscriptionRoutes = [
  subscriptionsPage,
  createSubscriptionAction,
  ...subscriptionDetailRoutes,
  ...changePlanRoutes,
];
