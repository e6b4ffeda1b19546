/** `/admin/lifecycle` (console.md "operations"): the sweep's runs with their summaries, and "run now". */
import { statusWords } from '../components/labels.ts';
import { z } from 'zod';
import type { LifecycleRunRow } from '../../lifecycle/repo.ts';
import { listLifecycleRuns, triggerLifecycle } from '../../lifecycle/service.ts';
import { uuid } from '../../http/schemas.ts';
import { Form } from '../components/Form.tsx';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { defineAction, definePage } from '../http/route.ts';
import { When } from './customers-parts.tsx';

const PAGE_SIZE = 50;

/** The summary's non-zero counts, one `name n` item each; the steps that failed; how long the sweep took. */
function Summary({ run }: { run: LifecycleRunRow }) {
  if (!run.summary) return <span class="muted">{run.status === 'failed' ? 'none' : 'not finished'}</span>;
  const { asOf: _asOf, failedSteps, durationsMs, ...counts } = run.summary as Record<string, unknown>;
  const done = Object.entries(counts).filter(([, n]) => typeof n === 'number' && n !== 0);
  const failed = Array.isArray(failedSteps) ? (failedSteps as string[]) : [];
  const total = Object.values((durationsMs ?? {}) as Record<string, number>).reduce((a, b) => a + b, 0);
  return (
    <ul class="plain summary">
      {done.length === 0 ? <li>nothing was due</li> : done.map(([name, n]) => <li>{`${name} ${String(n)}`}</li>)}
      {failed.length > 0 ? <li class="failed">{`failed steps: ${failed.join(', ')}`}</li> : null}
      <li class="muted">{`${total} ms`}</li>
    </ul>
  );
}

export const lifecyclePage = definePage({
  path: '/admin/lifecycle',
  query: z.object({ startingAfter: uuid.optional() }),
  async render({ deps, query, viewer, notice, state }) {
    const { rows, hasMore } = await listLifecycleRuns(deps.db, {
      limit: PAGE_SIZE,
      startingAfter: query.startingAfter,
    });
    return (
      <Layout title="Lifecycle sweep" viewer={viewer} section="Settings" notice={notice}>
        <p class="crumbs">
          <a href="/admin/settings">Settings</a>
        </p>
        <h1>Lifecycle sweep</h1>
        <p>
          The daily sweep renews subscriptions, ends trials, applies scheduled cancellations, marks invoices overdue,
          expires licenses, charges and retries dunning. Running it now queues the same sweep as the cron endpoint (or
          joins the one queued or running); its changes are recorded in the audit log as <code>system</code>.
        </p>
        <Form name="run" action="/admin/lifecycle/run" csrf={viewer.csrf} state={state} submit="Run the sweep now">
          {null}
        </Form>
        <h2>Runs</h2>
        <div class="words">
          <Table
            rows={rows}
            empty="No sweep has run yet."
            next={nextPageUrl('/admin/lifecycle', {}, rows.at(-1)?.id, hasMore)}
            columns={[
              { header: 'Requested', cell: (r) => <When value={r.created_at} /> },
              { header: 'Status', cell: (r) => <span class="status">{statusWords(r.status)}</span> },
              { header: 'As of', cell: (r) => <When value={r.as_of} /> },
              { header: 'Started', cell: (r) => <When value={r.started_at} /> },
              { header: 'Finished', cell: (r) => <When value={r.finished_at} /> },
              { header: 'Summary', cell: (r) => <Summary run={r} /> },
              { header: 'Error', cell: (r) => r.error ?? '' },
            ]}
          />
        </div>
      </Layout>
    );
  },
});

/** `POST /admin/lifecycle/run`: the cron endpoint's use case without waiting (a worker runs the sweep). */
export const runLifecycleAction = defineAction({
  path: '/admin/lifecycle/run',
  form: 'run',
  page: lifecyclePage,
  async run({ deps, actor }) {
    const outcome = await triggerLifecycle(
      deps.db,
      { asOf: null, asOfAllowed: deps.config.LIFECYCLE_ALLOW_AS_OF, waitMs: null },
      actor,
    );
    const joined = outcome.run.status === 'running' ? 'is running' : 'is queued';
    return {
      redirect: '/admin/lifecycle',
      notice: `Lifecycle run ${outcome.run.id} ${joined}; reload to see its summary.`,
    };
  },
});

export const lifecycleRoutes = [lifecyclePage, runLifecycleAction];
