import { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { JobDefinition } from './job.ts';

export type Boss = PgBoss;

export interface BossOptions {
  /** Create/upgrade pg-boss's schema and the queues (the release step and the quick-start do). */
  migrate: boolean;
  /** Run pg-boss maintenance and cron (worker processes do; the web process does not). */
  supervise: boolean;
  max?: number;
}

export function createBoss(connectionString: string, logger: Logger, options: BossOptions): Boss {
  const boss = new PgBoss({
    connectionString,
    application_name: 'billing-queue',
    max: options.max ?? 5,
    migrate: options.migrate,
    supervise: options.supervise,
    schedule: options.supervise,
    useListenNotify: true,
  });
  boss.on('error', (err) => logger.error({ err }, 'queue error'));
  boss.on('warning', (warning) => logger.warn({ warning }, 'queue warning'));
  return boss;
}

/**
 * Creates the queue of each of `definitions` (idempotent) and sets their schedules (a configured one that is
 * now unset is removed); run by the release step before anything sends.
 */
export async function createQueues(boss: Boss, definitions: readonly JobDefinition[], config: Config): Promise<void> {
  for (const job of definitions) {
    const existing = await boss.getQueue(job.name);
    if (existing) await boss.updateQueue(job.name, job.queue);
    else await boss.createQueue(job.name, job.queue);
    const schedule = typeof job.schedule === 'function' ? job.schedule(config) : job.schedule;
    if (schedule) await boss.schedule(job.name, schedule, {}, { tz: 'UTC' });
    else if (job.schedule) await boss.unschedule(job.name);
  }
}

let current: Boss | undefined;

/** The process's queue client, set once at start-up; enqueue() sends through it. */
export function setBoss(boss: Boss | undefined): void {
  current = boss;
}

export function getBoss(): Boss {
  if (!current) throw new Error('queue not started: call setBoss() at start-up');
  return current;
}
