/**
 * U-14's raw ceiling for usage ingestion: bare Koa and a pg Pool, the same API-key check as the service (the key's
 * sha256 looked up among usable keys), the JSON body read, and one multi-row INSERT of the batch into a plain table
 * with the same unique key (customer_id, transaction_id). Nothing else: no validation, no metric, no aggregate.
 *
 *   node --import tsx bench/usage-ceiling-server.ts     POST /usage/events
 *
 * DATABASE_URL, PORT, HOST and DB_POOL_MAX come from the environment (bench/harness.ts sets them).
 */
import { createHash } from 'node:crypto';
import Koa, { type Context } from 'koa';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX ?? 10) });

async function readJson(ctx: Context): Promise<{ events: { transactionId: string; metric: string }[] }> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function ingest(ctx: Context): Promise<void> {
  const key = (ctx.get('authorization') ?? '').replace(/^Bearer /, '');
  const { rows: keys } = await pool.query(
    `select id, customer_id from api_keys where key_hash = $1 and revoked_at is null
       and (expires_at is null or expires_at > now())`,
    [createHash('sha256').update(key).digest('hex')],
  );
  if (!keys[0]) {
    ctx.status = 401;
    return;
  }
  const { events } = await readJson(ctx);
  const { rows } = await pool.query(
    `insert into usage_ceiling_events (customer_id, transaction_id, metric, received_at)
     select $1, t.transaction_id, t.metric, now()
     from jsonb_to_recordset($2::jsonb) as t(transaction_id text, metric text)
     on conflict do nothing returning transaction_id`,
    [keys[0].customer_id, JSON.stringify(events.map((e) => ({ transaction_id: e.transactionId, metric: e.metric })))],
  );
  ctx.body = { accepted: rows.length };
}

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.path === '/healthz') ctx.body = { status: 'ok' };
  else if (ctx.method === 'POST' && ctx.path === '/usage/events') await ingest(ctx);
  else ctx.status = 404;
});

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
