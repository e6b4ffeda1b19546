/**
 * `/admin/audit-log` (C-11): who did what to which object, when, from where, with the changed fields;
 * newest first, filtered by actor (email, user id, `api_key:<id>`, `system`), target and action as the
 * API's `GET /api/audit-log` is, paged by cursor with the filters kept.
 */
import { label } from '../components/labels.ts';
import type { AuditRow } from '../../audit/repo.ts';
import { listAuditLogQuery } from '../../audit/schema.ts';
import { listAuditLog } from '../../audit/service.ts';
import { customerNames } from '../../customers/service.ts';
import { uuid } from '../../http/schemas.ts';
import { invoiceNumbers } from '../../invoices/service.ts';
import { findPlans } from '../../plans/service.ts';
import { actorLabel, Changes } from '../components/AuditTrail.tsx';
import { dateTime } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { definePage } from '../http/route.ts';
import { firstPage } from './invoices-filters.tsx';

const PATH = '/admin/audit-log';

/** The object types an admin action names (the filter's choices); any other in the URL still filters. */
const TARGET_TYPES = [
  'customer',
  'invoice',
  'subscription',
  'license',
  'product',
  'plan',
  'coupon',
  'webhook_endpoint',
  'webhook_delivery',
  'provider_event',
  'lifecycle_run',
  'setting',
  'api_key',
] as const;

/** The console page of each object type that has one (a plan's is its product's, found with the plan). */
const OBJECT_PAGES: Record<string, (id: string) => string> = {
  customer: (id) => `/admin/customers/${id}`,
  invoice: (id) => `/admin/invoices/${id}`,
  subscription: (id) => `/admin/subscriptions/${id}`,
  license: (key) => `/admin/licenses/${encodeURIComponent(key)}`,
  product: (id) => `/admin/products/${id}`,
  webhook_endpoint: (id) => `/admin/webhooks/${id}`,
  provider_event: (id) => `/admin/provider-events/${id}`,
};

/** The console page of an entry's object, when there is one (a UUID target for the id-addressed pages). */
function objectHref(targetType: string, targetId: string): string | undefined {
  const page = OBJECT_PAGES[targetType];
  if (!page) return undefined;
  return targetType === 'license' || uuid.safeParse(targetId).success ? page(targetId) : undefined;
}

/** How the page shows an entry's object: its number or name where found, else its id; linked to its page. */
interface ObjectRef {
  label: string;
  href?: string;
}

interface Filters {
  actor?: string;
  targetType?: string;
  targetId?: string;
  action?: string;
}

const filterValues = (q: Filters): Record<string, string | undefined> => ({
  actor: q.actor,
  targetType: q.targetType,
  targetId: q.targetId,
  action: q.action,
});

/**
 * The objects of a page's entries: customers by name, invoices by number, plans by name on their product's
 * page; one query per kind for the page (C-9: no query per row).
 */
async function objectRefs(
  db: Parameters<typeof customerNames>[0],
  rows: AuditRow[],
): Promise<(row: AuditRow) => ObjectRef> {
  const idsOf = (type: string) => [
    ...new Set(
      rows.filter((r) => r.target_type === type && uuid.safeParse(r.target_id).success).map((r) => r.target_id),
    ),
  ];
  const [customers, invoices, plans] = await Promise.all([
    customerNames(db, idsOf('customer')),
    invoiceNumbers(db, idsOf('invoice')),
    findPlans(db, idsOf('plan')),
  ]);
  const names: Record<string, Map<string, string> | undefined> = { customer: customers, invoice: invoices };
  return (row) => {
    const plan = row.target_type === 'plan' ? plans.get(row.target_id) : undefined;
    if (plan) return { label: plan.name, href: `/admin/products/${plan.product_id}#plans` };
    return {
      label: names[row.target_type]?.get(row.target_id) ?? row.target_id,
      href: objectHref(row.target_type, row.target_id),
    };
  };
}

function FilterForm({ values }: { values: Filters }) {
  const types =
    values.targetType && !(TARGET_TYPES as readonly string[]).includes(values.targetType)
      ? [...TARGET_TYPES, values.targetType]
      : TARGET_TYPES;
  return (
    <form method="get" action={PATH} class="filters">
      <p class="field">
        <label for="filter-actor">Actor (email, system, api_key:…)</label>
        <input id="filter-actor" name="actor" value={values.actor ?? ''} />
      </p>
      <p class="field">
        <label for="filter-target-type">Object type</label>
        <select id="filter-target-type" name="targetType">
          <option value="">Any</option>
          {types.map((t) => (
            <option value={t} selected={t === values.targetType}>
              {label(t)}
            </option>
          ))}
        </select>
      </p>
      <p class="field">
        <label for="filter-target-id">Object id</label>
        <input id="filter-target-id" name="targetId" value={values.targetId ?? ''} />
      </p>
      <p class="field">
        <label for="filter-action">Action</label>
        <input id="filter-action" name="action" value={values.action ?? ''} placeholder="invoice.void" />
      </p>
      <button type="submit">Filter</button>
    </form>
  );
}

function ObjectCell({ row, object: { label, href } }: { row: AuditRow; object: ObjectRef }) {
  return (
    <>
      <span class="muted">{row.target_type}</span> {href ? <a href={href}>{label}</a> : <code>{label}</code>}
    </>
  );
}

export const auditLogPage = definePage({
  path: PATH,
  query: listAuditLogQuery,
  async render({ deps, query, viewer, notice }) {
    const filters = filterValues(query);
    const { rows, hasMore } = await listAuditLog(deps.db, firstPage(query.startingAfter), query);
    const objectOf = await objectRefs(deps.db, rows);
    const filtered = Object.values(filters).some(Boolean);
    return (
      <Layout title="Audit log" viewer={viewer} section="Audit log" notice={notice}>
        <h1>Audit log</h1>
        <FilterForm values={query} />
        <div class="wide audit-log">
          <Table
            rows={rows}
            stack
            empty={filtered ? 'No admin action matches these filters.' : 'No admin action recorded yet.'}
            next={nextPageUrl(PATH, filters, rows.at(-1)?.id, hasMore)}
            columns={[
              { header: 'When', cell: (r: AuditRow) => <span class="nowrap">{dateTime(r.created_at)}</span> },
              { header: 'Who', cell: actorLabel },
              { header: 'Action', cell: (r) => <code class="action">{r.action}</code> },
              { header: 'Object', cell: (r) => <ObjectCell row={r} object={objectOf(r)} /> },
              { header: 'Changes', cell: (r) => <Changes row={r} /> },
              { header: 'From', cell: (r) => r.ip ?? '' },
              { header: 'Request id', cell: (r) => (r.request_id ? <code>{r.request_id}</code> : '') },
            ]}
          />
        </div>
      </Layout>
    );
  },
});

export const auditLogRoutes = [auditLogPage];
