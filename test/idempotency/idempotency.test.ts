import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const countKeys = async (customerId: string) =>
  Number((await app.db('api_keys').where({ customer_id: customerId }).count('* as n').first())?.n);

test('the same key and body replays the first answer and creates one row', async (t) => {
  const customer = await insertCustomer(app.db);
  const body = { name: 'ci', customerId: customer.id };
  const headers = { 'idempotency-key': 'create-key-1' };
  const first = await request(app.baseUrl, '/api/api-keys', { body, cookie, headers });
  t.is(first.status, 201);
  t.is(first.headers.get('idempotent-replayed'), null);
  const second = await request(app.baseUrl, '/api/api-keys', { body, cookie, headers });
  t.is(second.status, 201);
  t.is(second.headers.get('idempotent-replayed'), 'true');
  t.is(second.body.id, first.body.id);
  // The secret is shown once: the replay never carries it.
  t.is(second.body.key, null);
  t.is(await countKeys(customer.id), 1);
});

test('the same key with a different body is 409 idempotency_key_reused and changes nothing', async (t) => {
  const customer = await insertCustomer(app.db);
  const headers = { 'idempotency-key': 'reuse-1' };
  t.is(
    (await request(app.baseUrl, '/api/api-keys', { body: { name: 'a', customerId: customer.id }, cookie, headers }))
      .status,
    201,
  );
  const reused = await request(app.baseUrl, '/api/api-keys', {
    body: { name: 'b', customerId: customer.id },
    cookie,
    headers,
  });
  t.is(reused.status, 409);
  t.is(reused.body.error.code, 'idempotency_key_reused');
  t.is(await countKeys(customer.id), 1);
});

test('a refused request is stored and replayed too', async (t) => {
  const headers = { 'idempotency-key': 'bad-1' };
  const body = { name: 'x', customerId: '00000000-0000-4000-8000-000000000000' };
  const first = await request(app.baseUrl, '/api/api-keys', { body, cookie, headers });
  t.is(first.status, 400);
  t.is(first.body.error.code, 'customer_not_found');
  const again = await request(app.baseUrl, '/api/api-keys', { body, cookie, headers });
  t.is(again.status, 400);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, first.body);
});

test('a request while another holds the key is 409 request_in_progress', async (t) => {
  const customer = await insertCustomer(app.db);
  const user = await app.db('users').orderBy('created_at').first('id');
  const key = 'busy-1';
  const trx = await app.db.transaction();
  try {
    // Hold the same lock the middleware takes, as a request still running would.
    await trx.raw('select pg_advisory_xact_lock(hashtext(?), hashtext(?))', [`user:${user.id}`, key]);
    const busy = await request(app.baseUrl, '/api/api-keys', {
      body: { name: 'x', customerId: customer.id },
      cookie,
      headers: { 'idempotency-key': key },
    });
    t.is(busy.status, 409);
    t.is(busy.body.error.code, 'request_in_progress');
  } finally {
    await trx.rollback();
  }
  t.is(await countKeys(customer.id), 0);
  const after = await request(app.baseUrl, '/api/api-keys', {
    body: { name: 'x', customerId: customer.id },
    cookie,
    headers: { 'idempotency-key': key },
  });
  t.is(after.status, 201);
});

test('concurrent duplicates create exactly one row', async (t) => {
  const customer = await insertCustomer(app.db);
  const body = { name: 'race', customerId: customer.id };
  const answers = await Promise.all(
    Array.from({ length: 8 }, () =>
      request(app.baseUrl, '/api/api-keys', { body, cookie, headers: { 'idempotency-key': 'race-1' } }),
    ),
  );
  for (const a of answers)
    t.true(
      a.status === 201 || (a.status === 409 && a.body.error.code === 'request_in_progress'),
      `${a.status} ${a.text}`,
    );
  t.is(await countKeys(customer.id), 1);
});

test('keys are scoped per user', async (t) => {
  const customer = await insertCustomer(app.db);
  const other = await loginAsAdmin(app.baseUrl, app.db);
  const headers = { 'idempotency-key': 'shared-name' };
  const a = await request(app.baseUrl, '/api/api-keys', {
    body: { name: 'a', customerId: customer.id },
    cookie,
    headers,
  });
  const b = await request(app.baseUrl, '/api/api-keys', {
    body: { name: 'b', customerId: customer.id },
    cookie: other.cookie,
    headers,
  });
  t.is(a.status, 201);
  t.is(b.status, 201);
  t.not(a.body.id, b.body.id);
});

test('an unusable key value is a 400', async (t) => {
  const customer = await insertCustomer(app.db);
  const res = await request(app.baseUrl, '/api/api-keys', {
    body: { name: 'a', customerId: customer.id },
    cookie,
    headers: { 'idempotency-key': 'x'.repeat(300) },
  });
  t.is(res.status, 400);
  t.is(await countKeys(customer.id), 0);
});

test(
  'a refusal that echoes text jsonb cannot hold (NUL in a field name or a value, a lone surrogate) is stored and ' +
    'replayed byte for byte (issue 33)',
  async (t) => {
    const customers = await app.db('customers').count('* as n').first();
    for (const [n, raw] of [
      '{"\\u0000":1}',
      '{"name":"x","email":"a@example.test","nick\\u0000name":"\\u0000"}',
      '{"name":"\\u0000","email":"nul@example.test"}',
      '{"\\ud800":"\\udc00"}',
    ].entries()) {
      const headers = { 'idempotency-key': `nul-${n}`, 'content-type': 'application/json' };
      const first = await request(app.baseUrl, '/api/customers', { rawBody: raw, cookie, headers });
      t.is(first.status, 400, `${raw}: ${first.text}`);
      t.is(first.body.error?.code, 'invalid_request', raw);
      const again = await request(app.baseUrl, '/api/customers', { rawBody: raw, cookie, headers });
      t.is(again.status, 400, raw);
      t.is(again.headers.get('idempotent-replayed'), 'true', raw);
      t.is(again.text, first.text, `${raw}: the same answer`);
      t.is(again.headers.get('content-type'), first.headers.get('content-type'));
    }
    t.deepEqual(await app.db('customers').count('* as n').first(), customers);
  },
);
