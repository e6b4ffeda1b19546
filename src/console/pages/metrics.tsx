/**
 * `/admin/metrics` (issue 35, U-1/U-2): billable metrics, newest first, with the create form; each metric's page has
 * its edit form (aggregation and field refused with metric_in_use once a charge uses it) and its delete button
 * (refused the same way). Every form parses with the API's schema and calls the same service.
 */
import { z } from 'zod';
import { auditEntriesOf } from '../../audit/service.ts';
import { uuid } from '../../http/schemas.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { AGGREGATIONS, createMetricBody, updateMetricBody } from '../../metering/schema.ts';
import {
  createMetric,
  deleteMetric,
  getMetric,
  listMetrics,
  type MetricRow,
  updateMetric,
} from '../../metering/service.ts';
import { AuditTrail } from '../components/AuditTrail.tsx';
import { Field, Form, kept, type FormState } from '../components/Form.tsx';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { field, typedField, type FormValues } from '../http/form.ts';
import { uuidParam } from '../http/params.ts';
import { defineAction, definePage } from '../http/route.ts';
import { When } from './customers-parts.tsx';

const PAGE_SIZE = 50;
const FORMS = { create: 'create', edit: 'edit', delete: 'delete' } as const;
const metricUrl = (id: string) => `/admin/metrics/${id}`;

/** The form as the API's JSON: an empty field is absent (the schema names what is missing). */
const metricFields = (form: FormValues) => ({
  code: typedField(form, 'code'),
  name: typedField(form, 'name'),
  description: field(form, 'description'),
  aggregation: field(form, 'aggregation'),
  field: field(form, 'field'),
});

function MetricFields({ form, state, current }: { form: string; state?: FormState; current?: MetricRow }) {
  const mine = state?.name === form ? state : undefined;
  const value = (name: string, fallback = '') => kept(state, form, name, fallback);
  return (
    <>
      {current ? null : <Field label="Code (a-z, 0-9, _)" name="code" value={value('code')} state={mine} />}
      <Field label="Name" name="name" value={value('name', current?.name)} state={mine} />
      <Field
        label="Aggregation"
        name="aggregation"
        options={AGGREGATIONS}
        value={value('aggregation', current?.aggregation ?? 'count')}
        state={mine}
      />
      <Field
        label="Field (the event property read; none for count)"
        name="field"
        value={value('field', current?.field ?? '')}
        state={mine}
      />
      <Field
        label="Description"
        name="description"
        type="textarea"
        value={value('description', current?.description ?? '')}
        state={mine}
      />
    </>
  );
}

export const metricsPage = definePage({
  path: '/admin/metrics',
  query: z.object({ startingAfter: uuid.optional() }),
  async render({ deps, query, viewer, notice, state }) {
    const { rows, hasMore } = await listMetrics(deps.db, {
      limit: PAGE_SIZE,
      startingAfter: query.startingAfter,
      newestFirst: true,
    });
    return (
      <Layout title="Metrics" viewer={viewer} section="Products" notice={notice}>
        <p class="crumbs">
          <a href="/admin/products">Products</a> · <a href="/admin/coupons">Coupons</a>
        </p>
        <h1>Billable metrics</h1>
        <p class="muted">What a plan's usage charges measure, from the events your customers' apps report.</p>
        <details open={state?.name === FORMS.create}>
          <summary>New metric</summary>
          <Form name={FORMS.create} action="/admin/metrics" csrf={viewer.csrf} state={state} submit="Create metric">
            <MetricFields form={FORMS.create} state={state} />
          </Form>
        </details>
        <div class="words">
          <Table
            rows={rows}
            empty="No metrics yet."
            next={nextPageUrl('/admin/metrics', {}, rows.at(-1)?.id, hasMore)}
            columns={[
              { header: 'Code', cell: (m) => <a href={metricUrl(m.id)}>{m.code}</a> },
              { header: 'Name', cell: (m) => m.name },
              { header: 'Aggregation', cell: (m) => m.aggregation },
              { header: 'Field', cell: (m) => (m.field ? <code>{m.field}</code> : '—') },
              { header: 'Created', cell: (m) => <When value={m.created_at} /> },
            ]}
          />
        </div>
      </Layout>
    );
  },
});

export const metricPage = definePage({
  path: '/admin/metrics/:id',
  async render({ deps, params, viewer, notice, state }) {
    const id = uuidParam(params.id, 'Metric');
    const [metric, audit] = await Promise.all([getMetric(deps.db, id), auditEntriesOf(deps.db, 'metric', id)]);
    return (
      <Layout title={metric.name} viewer={viewer} section="Products" notice={notice}>
        <p class="crumbs">
          <a href="/admin/products">Products</a> · <a href="/admin/metrics">Metrics</a>
        </p>
        <h1>{metric.name}</h1>
        <dl class="props">
          <dt>Code</dt>
          <dd>
            <code>{metric.code}</code>
          </dd>
          <dt>Aggregation</dt>
          <dd>{metric.aggregation}</dd>
          <dt>Field</dt>
          <dd>{metric.field ? <code>{metric.field}</code> : '—'}</dd>
          <dt>Description</dt>
          <dd class="pre">{metric.description ?? '—'}</dd>
        </dl>
        <details open={state?.name === FORMS.edit}>
          <summary>Edit metric</summary>
          <p class="muted">Once a plan's charge uses the metric, only its name and description can change.</p>
          <Form name={FORMS.edit} action={metricUrl(id)} csrf={viewer.csrf} state={state} submit="Save metric">
            <MetricFields form={FORMS.edit} state={state} current={metric} />
          </Form>
        </details>
        <details open={state?.name === FORMS.delete}>
          <summary>Delete metric</summary>
          <p class="muted">Only a metric that no plan's charge uses can be deleted.</p>
          <Form
            name={FORMS.delete}
            action={`${metricUrl(id)}/delete`}
            csrf={viewer.csrf}
            state={state}
            submit="Delete metric"
          >
            {null}
          </Form>
        </details>
        <AuditTrail rows={audit} targetType="metric" targetId={id} />
      </Layout>
    );
  },
});

const createMetricAction = defineAction({
  path: '/admin/metrics',
  form: FORMS.create,
  page: metricsPage,
  async run({ deps, form, actor }) {
    const metric = await createMetric(deps.db, parseOrThrow(createMetricBody, metricFields(form), 'body'), actor);
    return { redirect: metricUrl(metric.id), notice: `Metric ${metric.code} created.` };
  },
});

const editMetricAction = defineAction({
  path: '/admin/metrics/:id',
  form: FORMS.edit,
  page: metricPage,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Metric');
    const { code: _code, ...changes } = metricFields(form);
    const body = parseOrThrow(updateMetricBody, { ...changes, field: changes.field ?? null }, 'body');
    await updateMetric(deps.db, id, body, actor);
    return { redirect: metricUrl(id), notice: 'Metric updated.' };
  },
});

const deleteMetricAction = defineAction({
  path: '/admin/metrics/:id/delete',
  form: FORMS.delete,
  page: metricPage,
  async run({ deps, params, actor }) {
    const id = uuidParam(params.id, 'Metric');
    const { code } = await getMetric(deps.db, id);
    await deleteMetric(deps.db, id, actor);
    return { redirect: '/admin/metrics', notice: `Metric ${code} deleted.` };
  },
});

export const metricRoutes = [metricsPage, metricPage, createMetricAction, editMetricAction, deleteMetricAction];
