import type { QueueOptions } from 'pg-boss';
import type { z } from 'zod';
import type { AppDeps } from '../app-deps.ts';
import type { Config } from '../config.ts';

/** The worker processes that scale separately; each has a Procfile line and a workers/ entry. */
export const WORKER_GROUPS = ['pdf', 'webhooks', 'provider_events', 'lifecycle', 'emails'] as const;
export type WorkerGroup = (typeof WORKER_GROUPS)[number];

export interface JobContext {
  jobId: string;
  retryCount: number;
}

/**
 * What a job is to the queue: its name, the worker group that runs it, the payload schema and queue options.
 * It holds no handler, so a service that enqueues a job imports this and not the work the job does
 * (which imports services, often the enqueuing one). Payloads carry ids.
 */
export interface JobDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  group: WorkerGroup;
  payload: S;
  queue: QueueOptions & { notify?: boolean };
  /**
   * A cron expression (UTC) when pg-boss should enqueue the job on a schedule, or a function of the
   * configuration answering one (undefined: no schedule; a schedule set earlier is removed).
   */
  schedule?: string | ((config: Config) => string | undefined);
  /** Jobs of this queue run at once in one process. */
  concurrency: number;
  /**
   * Jobs fetched (and completed) together by one of those `concurrency` slots and run side by side, for short
   * I/O-bound jobs that would otherwise wait on fetching one at a time. A batch whose job throws is retried whole,
   * so `run` must be safe to repeat (every run is). Default 1.
   */
  batchSize?: number;
}

export function defineJob<S extends z.ZodType>(definition: JobDefinition<S>): JobDefinition<S> {
  return definition;
}

/**
 * What a worker does with the jobs of `definition`. `run` re-reads rows, is idempotent, and throws to be
 * retried.
 */
export interface JobHandler<S extends z.ZodType = z.ZodType> {
  definition: JobDefinition<S>;
  run(deps: AppDeps, payload: z.output<S>, job: JobContext): Promise<unknown>;
  /**
   * Work the group's worker process runs beside the queue (started with the workers, stopped before the
   * queue at shutdown, its in-flight work finished): the webhooks dispatcher.
   */
  background?(deps: AppDeps): Background;
}

export interface Background {
  stop(): Promise<void>;
}

export function defineJobHandler<S extends z.ZodType>(
  definition: JobDefinition<S>,
  handler: Omit<JobHandler<S>, 'definition'>,
): JobHandler<S> {
  return { definition, ...handler };
}
