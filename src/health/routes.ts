import { z } from 'zod';
import { migrationsCurrent } from '../db/migrate.ts';
import { AppError } from '../errors.ts';
import { renderMetrics } from '../http/metrics.ts';
import { defineRoute } from '../http/route.ts';
import type { Knex } from 'knex';

let migrationsKnownCurrent = false;

async function checkReady(db: Knex): Promise<void> {
  await db.raw('select 1');
  // Once current, a running process stays current: new migrations come with a new release.
  if (!migrationsKnownCurrent) migrationsKnownCurrent = await migrationsCurrent(db);
  if (!migrationsKnownCurrent) throw new Error('migrations pending');
}

export const healthRoutes = [
  defineRoute({
    method: 'get',
    path: '/healthz',
    auth: 'public',
    tag: 'Operations',
    summary: 'The process is alive',
    responses: {
      200: {
        description: 'Alive',
        schema: z.object({ status: z.literal('ok') }).meta({ examples: [{ status: 'ok' }] }),
      },
    },
    errors: [],
    handler: async () => ({ body: { status: 'ok' } }),
  }),
  defineRoute({
    method: 'get',
    path: '/readyz',
    auth: 'public',
    tag: 'Operations',
    summary: 'The database is reachable and migrations are current; 503 otherwise',
    responses: {
      200: {
        description: 'Ready',
        schema: z.object({ status: z.literal('ready') }).meta({ examples: [{ status: 'ready' }] }),
      },
      503: { description: 'unavailable' },
    },
    // Its 503 unavailable is one every route can answer (route-errors.ts).
    errors: [],
    handler: async ({ deps }) => {
      try {
        await Promise.race([
          checkReady(deps.db),
          new Promise((_, reject) => setTimeout(() => reject(new Error('readiness check timed out')), 3000).unref()),
        ]);
      } catch (err) {
        deps.logger.warn({ err }, 'not ready');
        throw new AppError('unavailable', 'Database unreachable or migrations pending');
      }
      return { body: { status: 'ready' } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/metrics',
    auth: 'public',
    tag: 'Operations',
    summary: 'Prometheus metrics',
    responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain' } },
    errors: [],
    handler: async () => ({
      body: renderMetrics(),
      headers: { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' },
    }),
  }),
];
