/**
 * What the raw ceiling servers (bench/ceiling-server.ts, bench/usage-ceiling-server.ts) share: a pg Pool of the
 * service's size, the JSON body read with nothing in between, and serving until the harness stops them.
 * DATABASE_URL, PORT, HOST and DB_POOL_MAX come from the environment (bench/harness.ts sets them).
 */
import type Koa from 'koa';
import type { Context } from 'koa';
import pg from 'pg';

/** The same pool size as the service gets, so a ratio measures code, not connection counts. */
export const ceilingPool = () =>
  new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX ?? 10) });

export async function readJson<T>(ctx: Context): Promise<T> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
}

/** Listens on PORT/HOST until SIGTERM, SIGINT or the harness's stdin pipe closing (it died without cleaning up). */
export function serveUntilStopped(app: Koa, pool: pg.Pool): void {
  const server = app.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
  const shutdown = () => {
    server.close();
    server.closeAllConnections();
    void pool.end().finally(() => process.exit(0));
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  process.stdin.on('end', shutdown);
  process.stdin.resume();
}
