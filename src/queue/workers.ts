import type { AppDeps } from '../app-deps.ts';
import type { Boss } from './boss.ts';
import type { Background, JobHandler, WorkerGroup } from './job.ts';

/**
 * Wakes one of this process's workers of `queue` so it fetches again at once. With batchSize 1
 * pg-boss sleeps a poll interval after every job unless a NOTIFY arrives, so a backlog queued at
 * once (a month of invoices) would drain one job per slot per interval. Waking one worker per finished
 * job (round-robin; a busy one fetches when it is done) keeps the backlog moving without every
 * worker of the queue fetching after every job. An empty fetch ends the burst.
 */
let wakeCounter = 0;
function fetchAgain(boss: Boss, queue: string): void {
  const workers = boss.getWipData().filter((w) => w.name === queue);
  const worker = workers[wakeCounter++ % Math.max(1, workers.length)];
  if (worker) boss.notifyWorker(worker.id);
}

/**
 * Registers on `boss` those of `handlers` whose jobs belong to `groups` and starts their background work (the
 * webhooks dispatcher). Answers a stop for that background work: call it before stopping the queue at shutdown.
 */
export async function registerWorkers(
  boss: Boss,
  deps: AppDeps,
  groups: readonly WorkerGroup[],
  handlers: readonly JobHandler[],
): Promise<() => Promise<void>> {
  const backgrounds: Background[] = [];
  for (const handler of handlers.filter((h) => groups.includes(h.definition.group))) {
    const job = handler.definition;
    if (handler.background) backgrounds.push(handler.background(deps));
    await boss.work(
      job.name,
      {
        localConcurrency: job.concurrency,
        batchSize: job.batchSize ?? 1,
        pollingIntervalSeconds: 0.5,
        notifyPollingIntervalSeconds: 1,
      },
      async (items) => {
        try {
          // A batch's jobs run side by side; one that throws fails (and retries) the batch, so runs must repeat safely.
          const results = await Promise.all(items.map((item) => runOne(deps, handler, item)));
          return items.length === 1 ? results[0] : undefined;
        } finally {
          if (items.length > 0) fetchAgain(boss, job.name);
        }
      },
    );
  }
  return async () => {
    await Promise.all(backgrounds.map((b) => b.stop()));
  };
}

async function runOne(deps: AppDeps, handler: JobHandler, item: { id: string; data: unknown }): Promise<unknown> {
  const job = handler.definition;
  const log = deps.logger.child({ job: job.name, jobId: item.id });
  try {
    return await handler.run({ ...deps, logger: log }, job.payload.parse(item.data), {
      jobId: item.id,
      retryCount: (item as { retryCount?: number }).retryCount ?? 0,
    });
  } catch (err) {
    log.error({ err }, 'job failed');
    throw err;
  }
}
