/**
 * The raw ceilings the service is compared with: bare Koa and a pg Pool, none of the service's
 * middleware, auth, validation or knex. Runs as its own process, one kind per process:
 *
 *   node --import tsx bench/ceiling-server.ts select   GET  /products/:id  one select by primary key
 *   node --import tsx bench/ceiling-server.ts write    POST /customers     begin; insert; commit
 *
 * DATABASE_URL, PORT, HOST and DB_POOL_MAX come from the environment (bench/harness.ts sets them).
 */
import Koa, { type Context } from 'koa';
import pg from 'pg';

const kind = process.argv[2];
if (kind !== 'select' && kind !== 'write') {
  console.error('usage: ceiling-server.ts select|write');
  process.exit(2);
}

// The same pool size as the service gets, so the ratio measures code, not connection counts.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX ?? 10) });

async function readJson(ctx: Context): Promise<{ name: string; email: string }> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function selectProduct(ctx: Context, id: string): Promise<void> {
  const { rows } = await pool.query('select * from products where id = $1', [id]);
  if (rows[0]) ctx.body = rows[0];
  else ctx.status = 404;
}

async function insertCustomer(ctx: Context): Promise<void> {
  const input = await readJson(ctx);
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query('insert into customers (name, email) values ($1, $2) returning *', [
      input.name,
      input.email,
    ]);
    await client.query('commit');
    ctx.status = 201;
    ctx.body = rows[0];
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.path === '/healthz') ctx.body = { status: 'ok' };
  else if (kind === 'select' && ctx.method === 'GET' && ctx.path.startsWith('/products/'))
    await selectProduct(ctx, ctx.path.slice('/products/'.length));
  else if (kind === 'write' && ctx.method === 'POST' && ctx.path === '/customers') await insertCustomer(ctx);
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
// The harness keeps our stdin open; when it dies without cleaning up, the pipe closes and we go too.
process.stdin.on('end', shutdown);
process.stdin.resume();
