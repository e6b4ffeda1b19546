import { statusWords } from '../components/labels.ts';
import { z } from 'zod';
import { uuid } from '../../http/schemas.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { plansOfProducts } from '../../plans/service.ts';
import { createProductBody } from '../../products/schema.ts';
import { createProduct, listProducts } from '../../products/service.ts';
import { Form } from '../components/Form.tsx';
import { money } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { defineAction, definePage } from '../http/route.ts';
import { Nowrap, When } from './customers-parts.tsx';
import { productDetailRoutes } from './product-actions.tsx';
import { planPrice, ProductFields, productFields, type Plan } from './products-parts.tsx';

const PAGE_SIZE = 50;

/** A product's plans in its row: each with its price and cycle, an inactive one marked. */
function PlanList({ plans }: { plans: Plan[] }) {
  if (plans.length === 0) return <span class="muted">none</span>;
  return (
    <ul class="plain">
      {plans.map((p) => (
        <li>
          {p.name} <span class="nowrap">{planPrice(p)}</span>
          {p.active ? null : <span class="muted"> (inactive)</span>}
        </li>
      ))}
    </ul>
  );
}

/** `/admin/products` (console.md): every product newest first with its plans and usage metrics (D-20). */
export const productsPage = definePage({
  path: '/admin/products',
  query: z.object({ startingAfter: uuid.optional() }),
  async render({ deps, query, viewer, notice, state }) {
    const { rows, hasMore } = await listProducts(deps.db, {
      limit: PAGE_SIZE,
      startingAfter: query.startingAfter,
      newestFirst: true,
    });
    const plans = await plansOfProducts(
      deps.db,
      rows.map((p) => p.id),
    );
    return (
      <Layout title="Products" viewer={viewer} section="Products" notice={notice}>
        <h1>Products</h1>
        <p class="crumbs">
          <a href="/admin/coupons">Coupons</a> · <a href="/admin/tax-rates">Tax rates</a> ·{' '}
          <a href="/admin/metrics">Metrics</a>
        </p>
        <details open={state?.name === 'create'}>
          <summary>New product</summary>
          <Form name="create" action="/admin/products" csrf={viewer.csrf} state={state} submit="Create product">
            <ProductFields form="create" state={state} />
          </Form>
        </details>
        <div class="words">
          <Table
            rows={rows}
            empty="No products yet."
            next={nextPageUrl('/admin/products', {}, rows.at(-1)?.id, hasMore)}
            columns={[
              { header: 'Name', cell: (p) => <a href={`/admin/products/${p.id}`}>{p.name}</a> },
              { header: 'Type', cell: (p) => <Nowrap>{p.product_type}</Nowrap> },
              { header: 'Status', cell: (p) => <span class="status nowrap">{statusWords(p.status)}</span> },
              { header: 'Price', numeric: true, cell: (p) => <Nowrap>{money(p.price, p.currency)}</Nowrap> },
              { header: 'Plans', cell: (p) => <PlanList plans={plans.get(p.id) ?? []} /> },
              {
                header: 'Monthly revenue',
                numeric: true,
                cell: (p) => <Nowrap>{money(p.monthly_revenue, p.currency)}</Nowrap>,
              },
              { header: 'Active users', numeric: true, cell: (p) => p.active_users },
              { header: 'Created', cell: (p) => <When value={p.created_at} /> },
            ]}
          />
        </div>
      </Layout>
    );
  },
});

/** `POST /admin/products`: the API's create, the same schema and service. */
export const createProductAction = defineAction({
  path: '/admin/products',
  form: 'create',
  page: productsPage,
  async run({ deps, form, actor }) {
    const created = await createProduct(deps.db, parseOrThrow(createProductBody, productFields(form), 'body'), actor);
    return { redirect: `/admin/products/${created.id}`, notice: `Product ${created.name} created.` };
  },
});

export const productRoutes = [productsPage, createProductAction, ...productDetailRoutes];
