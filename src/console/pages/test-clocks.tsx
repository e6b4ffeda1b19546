/**
 * TC-6: `/admin/test-clocks`, the test clocks listed with their customers, created, advanced (a date field) and
 * deleted with the API's schemas and services. An advance runs as a job: the page shows the clock `advancing` until
 * it is done (reload to see it ready).
 */
import { z } from 'zod';
import type { Db } from '../../db/knex.ts';
import type { TestClockRow } from '../../test-clocks/repo.ts';
import { uuid } from '../../http/schemas.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { getSetting } from '../../settings/service.ts';
import { advanceTestClockBody, createTestClockBody } from '../../test-clocks/schema.ts';
import {
  countClockCustomers,
  createTestClock,
  deleteTestClock,
  getTestClock,
  listTestClocks,
  requestTestClockAdvance,
} from '../../test-clocks/service.ts';
import { Field, Form, kept, type FormState } from '../components/Form.tsx';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { field, typedField, type FormValues } from '../http/form.ts';
import { uuidParam } from '../http/params.ts';
import { askFirst, defineAction, definePage } from '../http/route.ts';
import { When } from './customers-parts.tsx';

const PAGE_SIZE = 50;
const PATH = '/admin/test-clocks';
const FORMS = { create: 'create', advance: 'advance', delete: 'delete' } as const;

/** A date typed in a date field (YYYY-MM-DD) or a full timestamp, as the API takes it. */
const timeField = (form: FormValues, name: string) => field(form, name)?.trim() || undefined;

type Clock = Awaited<ReturnType<typeof listTestClocks>>['rows'][number];

/** The page's state when it is this clock's form `name` (the refused or to-confirm one). */
const stateOf = (state: FormState | undefined, name: string, clock: Clock) =>
  state?.name === name && state.values.clockId === clock.id ? state : undefined;

function AdvanceForm({ clock, csrf, state }: { clock: Clock; csrf: string; state?: FormState }) {
  const mine = stateOf(state, FORMS.advance, clock);
  if (clock.status === 'advancing') return <span class="muted">Advancing…</span>;
  return (
    <Form
      name={FORMS.advance}
      scope={clock.id}
      action={`${PATH}/${clock.id}/advance`}
      csrf={csrf}
      state={mine}
      submit="Advance"
    >
      <input type="hidden" name="clockId" value={clock.id} />
      <Field
        label="Advance to"
        name="frozenTime"
        type="date"
        value={kept(mine, FORMS.advance, 'frozenTime')}
        state={mine}
      />
    </Form>
  );
}

/** Delete, asked first: the form comes back with the question, and its second submit deletes. */
function DeleteForm({ clock, csrf, state }: { clock: Clock; csrf: string; state?: FormState }) {
  const mine = stateOf(state, FORMS.delete, clock);
  return (
    <Form
      name={FORMS.delete}
      scope={clock.id}
      action={`${PATH}/${clock.id}/delete`}
      csrf={csrf}
      state={mine}
      submit="Delete"
    >
      <input type="hidden" name="clockId" value={clock.id} />
    </Form>
  );
}

export const testClocksPage = definePage({
  path: PATH,
  query: z.object({ startingAfter: uuid.optional() }),
  async render({ deps, query, viewer, notice, state }) {
    const [{ rows, hasMore }, enabled] = await Promise.all([
      listTestClocks(deps.db, { limit: PAGE_SIZE, startingAfter: query.startingAfter, newestFirst: true }),
      getSetting(deps.db, 'billing.test_clocks_enabled'),
    ]);
    const customers = await countClockCustomers(
      deps.db,
      rows.map((r) => r.id),
    );
    const creating = state?.name === FORMS.create ? state : undefined;
    return (
      <Layout title="Test clocks" viewer={viewer} section="Settings" notice={notice}>
        <p class="crumbs">
          <a href="/admin/settings">Settings</a>
        </p>
        <h1>Test clocks</h1>
        <p class="muted">
          A test clock gives the customers created on it (<code>testClockId</code>) their own time: advancing it runs
          their renewals, trial ends, charges, dunning, license expiries and usage billing as the daily sweep would,
          each at its moment. Their payments use the test methods <code>pm_card_visa</code> and{' '}
          <code>pm_card_chargeDeclined</code>; their emails are captured, never sent. A clock and its customers are
          deleted 30 days after it was created.
        </p>
        {enabled ? (
          <details open={Boolean(creating) || rows.length === 0}>
            <summary>New test clock</summary>
            <Form name={FORMS.create} action={PATH} csrf={viewer.csrf} state={state} submit="Create test clock">
              <Field label="Name" name="name" value={kept(state, FORMS.create, 'name')} state={creating} />
              <Field
                label="Starts at"
                name="frozenTime"
                type="date"
                value={kept(state, FORMS.create, 'frozenTime')}
                state={creating}
              />
            </Form>
          </details>
        ) : (
          <p class="notice">
            Test clocks are switched off here (
            <a href="/admin/settings#setting-billing.test_clocks_enabled">billing.test_clocks_enabled</a>
            ).
          </p>
        )}
        <div class="words">
          <Table
            rows={rows}
            empty="No test clocks yet."
            next={nextPageUrl(PATH, {}, rows.at(-1)?.id, hasMore)}
            columns={[
              { header: 'Name', cell: (r) => r.name },
              { header: 'Clock time', cell: (r) => <When value={r.frozen_time} /> },
              {
                header: 'Status',
                cell: (r) =>
                  r.status === 'advancing' ? (
                    <>
                      advancing to <When value={r.advance_target} />
                    </>
                  ) : (
                    r.status
                  ),
              },
              { header: 'Customers', numeric: true, cell: (r) => String(customers.get(r.id) ?? 0) },
              { header: 'Deleted after', cell: (r) => <When value={r.deletes_after} /> },
              { header: 'Advance', cell: (r) => <AdvanceForm clock={r} csrf={viewer.csrf} state={state} /> },
              { header: '', cell: (r) => <DeleteForm clock={r} csrf={viewer.csrf} state={state} /> },
            ]}
          />
        </div>
      </Layout>
    );
  },
});

/** `POST /admin/test-clocks`: the API's create (TC-1). */
export const createTestClockAction = defineAction({
  path: PATH,
  form: FORMS.create,
  page: testClocksPage,
  async run({ deps, form, actor }) {
    const body = parseOrThrow(
      createTestClockBody,
      { name: typedField(form, 'name'), frozenTime: timeField(form, 'frozenTime') },
      'body',
    );
    const clock = await createTestClock(deps.db, body, actor);
    return { redirect: PATH, notice: `Test clock ${clock.name} created.` };
  },
});

/** `POST /admin/test-clocks/:id/advance`: the API's advance (TC-3); the job runs it. */
export const advanceTestClockAction = defineAction({
  path: `${PATH}/:id/advance`,
  form: FORMS.advance,
  page: testClocksPage,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Test clock');
    const body = parseOrThrow(advanceTestClockBody, { frozenTime: timeField(form, 'frozenTime') }, 'body');
    const clock = await requestTestClockAdvance(deps.db, id, body, actor);
    return { redirect: PATH, notice: `Test clock ${clock.name} is advancing; reload to see it ready.` };
  },
});

/** `POST /admin/test-clocks/:id/delete`: the API's delete, asked first (it removes every record of its customers). */
export const deleteTestClockAction = defineAction({
  path: `${PATH}/:id/delete`,
  form: FORMS.delete,
  page: testClocksPage,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Test clock');
    const clock = await getTestClock(deps.db, id);
    const asked = askFirst(
      form,
      `Deleting test clock ${clock.name} deletes its customers and all their subscriptions, invoices and payments.`,
    );
    if (asked) return asked;
    await deleteTestClock(deps.db, id, actor);
    return { redirect: PATH, notice: `Test clock ${clock.name} deleted with its customers.` };
  },
});

export const testClockRoutes = [testClocksPage, createTestClockAction, advanceTestClockAction, deleteTestClockAction];

/** TC-6: the customer's page names the clock the customer lives on, with its time. */
export function TestClockNote({ clock }: { clock: TestClockRow | null }) {
  if (!clock) return null;
  return (
    <p class="notice test-clock">
      On test clock <a href={PATH}>{clock.name}</a>, whose time is <When value={clock.frozen_time} />: this customer's
      records live by the clock, its emails are captured and its payments use test methods.
    </p>
  );
}

/** The clock of a customer's page, when the customer is on one. */
export const clockOfCustomer = (db: Db, testClockId: string | null) =>
  testClockId ? getTestClock(db, testClockId) : Promise.resolve(null);
