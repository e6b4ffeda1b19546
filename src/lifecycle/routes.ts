import { defineRoute } from '../http/route.ts';
import { cronAcceptedResponse, cronLifecycleBody, cronLifecycleQuery, lifecycleSummaryResponse } from './schema.ts';
import { triggerLifecycle } from './service.ts';

/** How long `?wait=true` waits for the sweep before answering 202 (the sweep goes on). */
export const CRON_WAIT_MS = 5 * 60_000;

export const lifecycleRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/cron/lifecycle',
    auth: 'cron',
    tag: 'Lifecycle',
    summary: 'Run the daily lifecycle sweep (or join the one queued or running); ?wait=true answers its summary',
    query: cronLifecycleQuery,
    body: cronLifecycleBody,
    idempotent: false,
    responses: {
      200: { description: "With ?wait=true: the finished sweep's summary", schema: lifecycleSummaryResponse },
      202: {
        description: 'Queued or joined (also when ?wait=true waited 5 minutes); Retry-After when waiting ran out',
        schema: cronAcceptedResponse,
      },
      400: { description: 'invalid_request: a bad body, or an `asOf` without LIFECYCLE_ALLOW_AS_OF=true' },
      401: { description: 'invalid_cron_secret; nothing is enqueued' },
      500: { description: 'lifecycle_run_failed: with ?wait=true, the sweep failed' },
    },
    errors: ['lifecycle_run_failed'],
    handler: async ({ deps, query, body, actor }) => {
      const request = {
        asOf: body.asOf ?? null,
        asOfAllowed: deps.config.LIFECYCLE_ALLOW_AS_OF,
        waitMs: query.wait ? CRON_WAIT_MS : null,
      };
      const outcome = await triggerLifecycle(deps.db, request, actor);
      if (outcome.kind === 'finished') return { status: 200, body: { jobId: outcome.run.id, ...outcome.summary } };
      return {
        status: 202,
        body: { jobId: outcome.run.id, status: outcome.run.status },
        headers: query.wait ? { 'Retry-After': '30' } : undefined,
      };
    },
  }),
];
