import { z } from 'zod';
import { CustomerIdFilter, StatusFilter } from './list-helpers.tsx';
import { customerNames } from '../../customers/service.ts';
import { uuid } from '../../http/schemas.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { createLicenseBody, LICENSE_STATUSES } from '../../licenses/schema.ts';
import { createLicense, listLicenses } from '../../licenses/service.ts';
import { effectiveStatus } from '../../licenses/status.ts';
import { listProductsOfCustomerIds } from '../../products/service.ts';
import { Field, Form, kept, type FormState } from '../components/Form.tsx';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { field } from '../http/form.ts';
import { createFormQuery, createFormUrl } from '../http/params.ts';
import { defineAction, definePage } from '../http/route.ts';
import { Nowrap, When } from './customers-parts.tsx';
import { firstPage } from './invoices-filters.tsx';
import { licenseDetailRoutes } from './license-detail.tsx';
import { FORMS, LicenseFields, licenseFields, usedOfLimit } from './licenses-parts.tsx';

const listQuery = z.object({
  q: z.string().trim().max(200).optional(),
  status: z.enum(LICENSE_STATUSES).optional(),
  customerId: uuid.optional(),
  startingAfter: uuid.optional(),
});
type ListQuery = z.output<typeof listQuery>;
/** The list's filters, and `create` (the page opens its create form, started with the filter's customer). */
const pageQuery = listQuery.extend(createFormQuery.shape);

/** The filters alone (no cursor), for the next-page link; a blank search is no search. */
const filtersOf = (q: ListQuery) => ({ q: q.q || undefined, status: q.status, customerId: q.customerId });

/** This page with its create form open and started for a customer (the customer page's "New license"). */
export const newLicenseUrl = (customerId: string) => createFormUrl('/admin/licenses', FORMS.create, customerId);

function CreateLicenseForm({
  csrf,
  state,
  customerId,
  open,
}: {
  csrf: string;
  state?: FormState;
  customerId?: string;
  open: boolean;
}) {
  const mine = state?.name === FORMS.create ? state : undefined;
  return (
    <details id={FORMS.create} open={mine || open ? true : undefined}>
      <summary>Issue a license</summary>
      <Form name={FORMS.create} action="/admin/licenses" csrf={csrf} state={mine} submit="Issue license">
        <Field
          label="Customer ID"
          name="customerId"
          value={kept(mine, FORMS.create, 'customerId', customerId ?? '')}
          state={mine}
        />
        <Field label="Product ID" name="productId" value={kept(mine, FORMS.create, 'productId')} state={mine} />
        <LicenseFields form={FORMS.create} state={mine} />
      </Form>
    </details>
  );
}

function FilterForm({ values }: { values: ListQuery }) {
  return (
    <form method="get" action="/admin/licenses" class="filters">
      <p class="field">
        <label for="filter-q">Key or customer</label>
        <input id="filter-q" name="q" type="search" value={values.q ?? ''} />
      </p>
      <StatusFilter statuses={LICENSE_STATUSES} value={values.status} />
      <CustomerIdFilter value={values.customerId} />
      <button type="submit">Filter</button>
    </form>
  );
}

/**
 * Newest first, by cursor (C-4). `q` matches the beginning of a key, or a customer as the customer search
 * does (D-23); status reads as every answer does (a passed date is `expired`).
 */
export const licensesPage = definePage({
  path: '/admin/licenses',
  query: pageQuery,
  async render({ deps, query, viewer, notice, state }) {
    const filters = filtersOf(query);
    const { rows, hasMore } = await listLicenses(deps.db, firstPage(query.startingAfter), filters);
    const customerIds = rows.map((l) => l.customer_id);
    // A license's product is among its customer's products, so one set-wise read names every product shown.
    const [names, products] = await Promise.all([
      customerNames(deps.db, customerIds),
      listProductsOfCustomerIds(deps.db, customerIds),
    ]);
    const productNames = new Map(products.map((p) => [p.id, p.name]));
    const now = new Date();
    const filtered = Object.values(filters).some(Boolean);
    return (
      <Layout title="Licenses" viewer={viewer} section="Licenses" notice={notice}>
        <h1>Licenses</h1>
        <CreateLicenseForm
          csrf={viewer.csrf}
          state={state}
          customerId={query.customerId}
          open={query.create !== undefined}
        />
        <FilterForm values={query} />
        <div class="wide">
          <Table
            rows={rows}
            empty={filtered ? 'No licenses match these filters.' : 'No licenses yet.'}
            next={nextPageUrl('/admin/licenses', filters, rows.at(-1)?.id, hasMore)}
            columns={[
              {
                header: 'Key',
                cell: (l) => (
                  <a class="nowrap" href={`/admin/licenses/${encodeURIComponent(l.license_key)}`}>
                    <code>{l.license_key}</code>
                  </a>
                ),
              },
              {
                header: 'Customer',
                cell: (l) => (
                  <a href={`/admin/customers/${l.customer_id}`}>{names.get(l.customer_id) ?? l.customer_id}</a>
                ),
              },
              { header: 'Product', cell: (l) => productNames.get(l.product_id) ?? l.product_id },
              { header: 'Status', cell: (l) => <span class="status">{effectiveStatus(l, now)}</span> },
              {
                header: 'Activations',
                numeric: true,
                cell: (l) => usedOfLimit(l.current_activations, l.max_activations),
              },
              {
                header: 'Expires',
                cell: (l) => (l.expires_at ? <When value={l.expires_at} /> : <Nowrap>never</Nowrap>),
              },
            ]}
          />
        </div>
      </Layout>
    );
  },
});

/** `POST /admin/licenses`: the API's create, the same schema and service. */
export const createLicenseAction = defineAction({
  path: '/admin/licenses',
  form: FORMS.create,
  page: licensesPage,
  async run({ deps, form, actor }) {
    const body = {
      customerId: field(form, 'customerId')?.trim(),
      productId: field(form, 'productId')?.trim(),
      ...licenseFields(form, 'absent'),
    };
    const created = await createLicense(deps.db, parseOrThrow(createLicenseBody, body, 'body'), deps.config, actor);
    return {
      redirect: `/admin/licenses/${encodeURIComponent(created.license_key)}`,
      notice: `License ${created.license_key} issued.`,
    };
  },
});

export const licenseRoutes = [licensesPage, createLicenseAction, ...licenseDetailRoutes];
