import { statusWords } from '../components/labels.ts';
import { z } from 'zod';
import { auditEntriesOf } from '../../audit/service.ts';
import { uuid } from '../../http/schemas.ts';
import { money as decimal } from '../../money.ts';
import { listPlansWithCharges } from '../../plans/service.ts';
import { listMetrics } from '../../metering/service.ts';
import { chargeSummary } from './plan-charges.tsx';
import { getProduct } from '../../products/service.ts';
import { AuditTrail } from '../components/AuditTrail.tsx';
import { Field, Form, kept, type FormState } from '../components/Form.tsx';
import { TaxRateChoice } from '../components/TaxRateChoice.tsx';
import { listField } from '../http/form.ts';
import { allTaxRates, type TaxRateRow } from '../../tax-rates/service.ts';
import { dateTime, money } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { Table } from '../components/Table.tsx';
import { definePage, type ConsoleViewer } from '../http/route.ts';
import { When } from './customers-parts.tsx';
import { uuidParam } from '../http/params.ts';
import { PlanFields, planPrice, ProductFields, type Plan, type Product } from './products-parts.tsx';

const PLANS_PAGE = 50;

/** The forms of the page, by the `_form` name a refused post comes back with. */
export const PRODUCT_FORMS = {
  edit: 'edit',
  archive: 'archive',
  unarchive: 'unarchive',
  delete: 'delete',
  plan: 'plan',
  planEdit: 'plan-edit',
} as const;

export const productUrl = (id: string) => `/admin/products/${id}`;

/** D-20's derived figures, with when the job last computed them. */
function Metrics({ product }: { product: Product }) {
  return (
    <>
      <div class="cards">
        <div class="card">
          <div class="label">Monthly revenue</div>
          <div class="value">{money(product.monthly_revenue, product.currency)}</div>
        </div>
        <div class="card">
          <div class="label">Active users</div>
          <div class="value">{product.active_users}</div>
        </div>
        <div class="card">
          <div class="label">Daily active users</div>
          <div class="value">{product.daily_active_users}</div>
        </div>
        <div class="card">
          <div class="label">Churn rate (30 days)</div>
          <div class="value">{`${decimal(product.churn_rate).times(100).toFixed(2)}%`}</div>
        </div>
      </div>
      <p class="muted">
        {product.metrics_refreshed_at
          ? `Usage figures as of ${dateTime(product.metrics_refreshed_at)}; they are recomputed every 5 minutes.`
          : 'Usage figures are not computed yet; they are recomputed every 5 minutes.'}
      </p>
    </>
  );
}

/** A plan's rename / (de)activate form, in its row (D-40: the price never changes; a new price is a new plan). */
function PlanEdit({
  plan,
  productId,
  viewer,
  state,
  rates,
}: {
  plan: Plan;
  productId: string;
  viewer: ConsoleViewer;
  state?: FormState;
  rates: TaxRateRow[];
}) {
  return (
    <details open={Boolean(state)}>
      <summary>Edit</summary>
      <Form
        name={PRODUCT_FORMS.planEdit}
        scope={plan.id}
        action={`${productUrl(productId)}/plans/${plan.id}`}
        csrf={viewer.csrf}
        state={state}
        submit="Save plan"
      >
        <Field label="Name" name="name" value={kept(state, PRODUCT_FORMS.planEdit, 'name', plan.name)} state={state} />
        <Field
          label="Active"
          name="active"
          options={['true', 'false']}
          value={kept(state, PRODUCT_FORMS.planEdit, 'active', String(plan.active))}
          state={state}
        />
        <TaxRateChoice
          rates={rates}
          chosen={state ? (listField(state.values, 'taxRateIds') ?? []) : plan.tax_rate_ids}
          state={state}
          form={PRODUCT_FORMS.planEdit}
        />
      </Form>
    </details>
  );
}

/**
 * `/admin/products/:id` (console.md): the product, its usage figures, its plans (newest first, by
 * `?plansAfter=`), its forms (edit, archive, delete, new plan, each plan's edit) and its audit entries.
 */
export const productPage = definePage({
  path: '/admin/products/:id',
  query: z.object({ plansAfter: uuid.optional() }),
  async render({ deps, params, query, viewer, notice, state }) {
    const id = uuidParam(params.id, 'Product');
    const product = await getProduct(deps.db, id);
    const [plans, audit, metrics, rates] = await Promise.all([
      listPlansWithCharges(
        deps.db,
        { limit: PLANS_PAGE, startingAfter: query.plansAfter, newestFirst: true },
        { productId: id },
      ),
      auditEntriesOf(deps.db, 'product', id),
      listMetrics(deps.db, { limit: 500 }),
      allTaxRates(deps.db),
    ]);
    // A refused plan edit comes back with the plan's id in the action's URL: only that row's form shows it.
    const planState = (plan: Plan) =>
      state?.name === PRODUCT_FORMS.planEdit && params.planId === plan.id ? state : undefined;
    const archived = product.status === 'archived';
    const lastPlan = plans.rows.at(-1);
    return (
      <Layout title={product.name} viewer={viewer} section="Products" notice={notice}>
        <p class="crumbs">
          <a href="/admin/products">Products</a> · <a href="/admin/coupons">Coupons</a> ·{' '}
          <a href="/admin/tax-rates">Tax rates</a> · <a href="/admin/metrics">Metrics</a>
        </p>
        <h1>{product.name}</h1>
        <Metrics product={product} />
        <section id="product" aria-labelledby="product-h">
          <h2 id="product-h">Product</h2>
          <dl class="props">
            <dt>ID</dt>
            <dd>
              <code class="id">{product.id}</code>
            </dd>
            <dt>Type</dt>
            <dd>{product.product_type}</dd>
            <dt>Status</dt>
            <dd>
              <span class="status">{statusWords(product.status)}</span>
            </dd>
            <dt>Price</dt>
            <dd>{money(product.price, product.currency)}</dd>
            <dt>Description</dt>
            <dd class="pre">{product.description ?? '—'}</dd>
            <dt>Created</dt>
            <dd>
              <When value={product.created_at} />
            </dd>
            <dt>Updated</dt>
            <dd>
              <When value={product.updated_at} />
            </dd>
          </dl>
        </section>
        <details open={state?.name === PRODUCT_FORMS.edit}>
          <summary>Edit product</summary>
          <Form
            name={PRODUCT_FORMS.edit}
            action={productUrl(id)}
            csrf={viewer.csrf}
            state={state}
            submit="Save changes"
          >
            <ProductFields form={PRODUCT_FORMS.edit} state={state} current={product} />
          </Form>
        </details>
        {archived ? (
          <details open={state?.name === PRODUCT_FORMS.unarchive}>
            <summary>Unarchive product</summary>
            <p class="muted">The product becomes active again.</p>
            <Form
              name={PRODUCT_FORMS.unarchive}
              action={`${productUrl(id)}/unarchive`}
              csrf={viewer.csrf}
              state={state}
              submit="Unarchive product"
            >
              {null}
            </Form>
          </details>
        ) : (
          <details open={state?.name === PRODUCT_FORMS.archive}>
            <summary>Archive product</summary>
            <p class="muted">
              Its plans, subscriptions and licenses stay as they are; the product is only marked archived.
            </p>
            <Form
              name={PRODUCT_FORMS.archive}
              action={`${productUrl(id)}/archive`}
              csrf={viewer.csrf}
              state={state}
              submit="Archive product"
            >
              {null}
            </Form>
          </details>
        )}
        <details open={state?.name === PRODUCT_FORMS.delete}>
          <summary>Delete product</summary>
          <p class="muted">
            Only a product that no plan, subscription or license uses can be deleted; archive it otherwise.
          </p>
          <Form
            name={PRODUCT_FORMS.delete}
            action={`${productUrl(id)}/delete`}
            csrf={viewer.csrf}
            state={state}
            submit="Delete product"
          >
            {null}
          </Form>
        </details>
        <section id="plans" class="words" aria-labelledby="plans-h">
          <h2 id="plans-h">Plans</h2>
          <details open={state?.name === PRODUCT_FORMS.plan}>
            <summary>New plan</summary>
            <Form
              name={PRODUCT_FORMS.plan}
              action={`${productUrl(id)}/plans`}
              csrf={viewer.csrf}
              state={state}
              submit="Create plan"
            >
              <PlanFields
                form={PRODUCT_FORMS.plan}
                state={state}
                currency={product.currency}
                metrics={metrics.rows}
                rates={rates}
              />
            </Form>
          </details>
          <Table
            rows={plans.rows}
            empty="No plans for this product yet."
            next={plans.hasMore && lastPlan ? `${productUrl(id)}?plansAfter=${lastPlan.id}#plans` : undefined}
            columns={[
              { header: 'Name', cell: (p) => p.name },
              { header: 'Price', numeric: true, cell: (p) => <span class="nowrap">{planPrice(p)}</span> },
              { header: 'Active', cell: (p) => (p.active ? 'yes' : 'no') },
              {
                header: 'Usage charges',
                cell: (p) =>
                  p.charges?.length ? (
                    <ul class="charges">
                      {p.charges.map((c) => (
                        <li>{chargeSummary(c, p.currency)}</li>
                      ))}
                    </ul>
                  ) : (
                    '—'
                  ),
              },
              { header: 'Created', cell: (p) => <When value={p.created_at} /> },
              {
                header: 'Edit',
                cell: (p) => <PlanEdit plan={p} productId={id} viewer={viewer} state={planState(p)} rates={rates} />,
              },
            ]}
          />
        </section>
        <AuditTrail rows={audit} targetType="product" targetId={id} />
      </Layout>
    );
  },
});
