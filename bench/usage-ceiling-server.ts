/**
 * U-14's raw ceiling for usage ingestion: bare Koa and a pg Pool, the same API-key check as the service (the key's
 * sha256 looked up among usable keys), the JSON body read, and one multi-row INSERT of the batch into a plain table
 * with the same unique key (customer_id, transaction_id). Nothing else: no validation, no metric, no aggregate.
 *
 *   node --import tsx bench/usage-ceiling-server.ts     POST /usage/events
 */
import { createHash } from 'node:crypto';
import Koa, { type Context } from 'koa';
import { ceilingPool, readJson, serveUntilStopped } from './ceiling-kit.ts';

const pool = ceilingPool();

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
  const { events } = await readJson<{ events: { transactionId: string; metric: string }[] }>(ctx);
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

serveUntilStopped(app, pool);
