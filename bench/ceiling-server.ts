/**
 * The raw ceilings the service is compared with: bare Koa and a pg Pool, none of the service's
 * middleware, auth, validation or knex. Runs as its own process, one kind per process:
 *
 *   node --import tsx bench/ceiling-server.ts select   GET  /products/:id  one select by primary key
 *   node --import tsx bench/ceiling-server.ts write    POST /customers     begin; insert; commit
 */
import Koa, { type Context } from 'koa';
import { ceilingPool, readJson, serveUntilStopped } from './ceiling-kit.ts';

const kind = process.argv[2];
if (kind !== 'select' && kind !== 'write') {
  console.error('usage: ceiling-server.ts select|write');
  process.exit(2);
}

const pool = ceilingPool();

async function selectProduct(ctx: Context, id: string): Promise<void> {
  const { rows } = await pool.query('select * from products where id = $1', [id]);
  if (rows[0]) ctx.body = rows[0];
  else ctx.status = 404;
}

async function insertCustomer(ctx: Context): Promise<void> {
  const input = await readJson<{ name: string; email: string }>(ctx);
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

serveUntilStopped(app, pool);
