/** T-7: `/admin/tax-rates`, the rates listed, created and archived (or restored) with the API's schema and service. */
import { z } from 'zod';
import { uuid } from '../../http/schemas.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { createTaxRateBody, percentageText } from '../../tax-rates/schema.ts';
import { createTaxRate, listTaxRates, updateTaxRate } from '../../tax-rates/service.ts';
import { Field, Form, kept, type FormState } from '../components/Form.tsx';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { field, typedField, type FormValues } from '../http/form.ts';
import { uuidParam } from '../http/params.ts';
import { defineAction, definePage } from '../http/route.ts';
import { When } from './customers-parts.tsx';

const PAGE_SIZE = 50;
const FORM = 'create';
const PATH = '/admin/tax-rates';

/** The form as the API's JSON: empty optional fields absent, the checkbox as a boolean. */
function taxRateFields(form: FormValues) {
  return {
    name: typedField(form, 'name'),
    percentage: field(form, 'percentage')?.trim(),
    inclusive: field(form, 'inclusive') === 'true',
    country: field(form, 'country')?.trim(),
    description: field(form, 'description')?.trim(),
  };
}

function TaxRateFields({ state }: { state?: FormState }) {
  const mine = state?.name === FORM ? state : undefined;
  const value = (name: string) => kept(state, FORM, name);
  return (
    <>
      <Field label="Name (e.g. VAT DE)" name="name" value={value('name')} state={mine} />
      <Field label="Percentage (0-100, e.g. 19)" name="percentage" value={value('percentage')} state={mine} />
      <Field
        label="Prices include this tax"
        name="inclusive"
        options={['false', 'true']}
        value={value('inclusive') || 'false'}
        state={mine}
      />
      <Field label="Country (two letters, optional)" name="country" value={value('country')} state={mine} />
      <Field label="Description (optional)" name="description" value={value('description')} state={mine} />
    </>
  );
}

type Rate = Awaited<ReturnType<typeof listTaxRates>>['rows'][number];

/** Archive or restore, as a one-button form (T-1: an archived rate applies to no new invoice). */
function ActiveButton({ rate, csrf }: { rate: Rate; csrf: string }) {
  const verb = rate.active ? 'archive' : 'restore';
  return (
    <form method="post" action={`${PATH}/${rate.id}/${verb}`} class="inline">
      <input type="hidden" name="_csrf" value={csrf} />
      <input type="hidden" name="_form" value={verb} />
      <button type="submit" class={rate.active ? 'secondary' : undefined}>
        {rate.active ? 'Archive' : 'Restore'}
      </button>
    </form>
  );
}

export const taxRatesPage = definePage({
  path: PATH,
  query: z.object({ startingAfter: uuid.optional() }),
  async render({ deps, query, viewer, notice, state }) {
    const { rows, hasMore } = await listTaxRates(deps.db, {
      limit: PAGE_SIZE,
      startingAfter: query.startingAfter,
      newestFirst: true,
    });
    return (
      <Layout title="Tax rates" viewer={viewer} section="Products" notice={notice}>
        <p class="crumbs">
          <a href="/admin/products">Products</a> · <a href="/admin/coupons">Coupons</a>
        </p>
        <h1>Tax rates</h1>
        <p class="muted">
          A rate's percentage never changes: invoices keep the rates they were issued with. To change a rate, archive it
          and create a new one.
        </p>
        <details open={state?.name === FORM || rows.length === 0}>
          <summary>New tax rate</summary>
          <Form name={FORM} action={PATH} csrf={viewer.csrf} state={state} submit="Create tax rate">
            <TaxRateFields state={state} />
          </Form>
        </details>
        <div class="words">
          <Table
            rows={rows}
            empty="No tax rates yet."
            next={nextPageUrl(PATH, {}, rows.at(-1)?.id, hasMore)}
            columns={[
              { header: 'Name', cell: (r) => r.name },
              { header: 'Percentage', numeric: true, cell: (r) => `${percentageText(r.percentage)}%` },
              { header: 'Prices', cell: (r) => (r.inclusive ? 'include tax' : 'exclude tax') },
              { header: 'Country', cell: (r) => r.country ?? '—' },
              { header: 'Description', cell: (r) => r.description ?? '—' },
              { header: 'Status', cell: (r) => (r.active ? 'Active' : 'Archived') },
              { header: 'Created', cell: (r) => <When value={r.created_at} /> },
              { header: '', cell: (r) => <ActiveButton rate={r} csrf={viewer.csrf} /> },
            ]}
          />
        </div>
      </Layout>
    );
  },
});

/** `POST /admin/tax-rates`: the API's create (T-1), the same schema and service. */
export const createTaxRateAction = defineAction({
  path: PATH,
  form: FORM,
  page: taxRatesPage,
  async run({ deps, form, actor }) {
    const rate = await createTaxRate(deps.db, parseOrThrow(createTaxRateBody, taxRateFields(form), 'body'), actor);
    return { redirect: PATH, notice: `Tax rate ${rate.name} created.` };
  },
});

function activeAction(verb: 'archive' | 'restore', active: boolean) {
  return defineAction({
    path: `${PATH}/:id/${verb}`,
    form: verb,
    page: taxRatesPage,
    async run({ deps, params, actor }) {
      const rate = await updateTaxRate(deps.db, uuidParam(params.id, 'Tax rate'), { active }, actor);
      return { redirect: PATH, notice: `Tax rate ${rate.name} ${verb}d.` };
    },
  });
}

export const taxRateRoutes = [
  taxRatesPage,
  createTaxRateAction,
  activeAction('archive', false),
  activeAction('restore', true),
];
