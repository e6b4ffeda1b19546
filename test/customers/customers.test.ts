/** Admin customer routes (interface.md, Customers; D-5, D-22): happy paths, errors, security. */
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { createCustomer } from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const api = (path: string, options: Parameters<typeof request>[2] = {}) =>
  request(app.baseUrl, path, { cookie, ...options });
const create = (body: Record<string, unknown> = {}) => createCustomer(app.baseUrl, cookie, body);
const paths = (res: { body: { error: { details: { path: string }[] } } }) =>
  res.body.error.details.map((d) => d.path).sort();

test('POST creates a customer with every field; absent optional fields are null', async (t) => {
  const full = {
    name: 'Acme Corp',
    email: 'Billing@Acme.example',
    company: 'Acme',
    tier: 'enterprise',
    billingAddress: '1 Road, Town',
    taxId: 'DE123',
    paymentMethod: 'provider_a',
  };
  const res = await api('/api/customers', { body: full });
  t.is(res.status, 201);
  t.like(res.body, { ...full, healthScore: 100, creditBalance: '0.00', products: [] });
  t.regex(res.body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  const minimal = await create({ name: 'Min', email: 'min@example.test' });
  t.like(minimal, {
    company: null,
    tier: null,
    billingAddress: null,
    taxId: null,
    paymentMethod: null,
    taxRateIds: [],
    taxExempt: 'none',
    healthScore: 100,
    creditBalance: '0.00',
  });
  t.deepEqual(Object.keys(minimal).sort(), [
    'billingAddress',
    'company',
    'createdAt',
    'creditBalance',
    'creditBalances',
    'email',
    'healthScore',
    'id',
    'name',
    'paymentMethod',
    'products',
    'taxExempt',
    'taxId',
    'taxRateIds',
    'testClockId',
    'tier',
    'updatedAt',
  ]);
});

test('GET /api/customers/:id answers the customer with products and subscriptions', async (t) => {
  const c = await create({ company: 'Initech' });
  const res = await api(`/api/customers/${c.id}`);
  t.is(res.status, 200);
  t.deepEqual(res.body, { ...c, subscriptions: [] });
});

test.serial('GET /api/customers lists in creation order with products and pages (D-5)', async (t) => {
  const made = [await create({ name: 'L1' }), await create({ name: 'L2' }), await create({ name: 'L3' })];
  const all = await api('/api/customers?limit=500');
  t.is(all.status, 200);
  const ids = all.body.map((c: { id: string }) => c.id);
  t.deepEqual(
    ids.slice(-3),
    made.map((c) => c.id),
  );
  t.deepEqual(all.body.at(-1), made[2]);
  const page = await api(`/api/customers?limit=1&startingAfter=${made[0].id}`);
  t.deepEqual(
    page.body.map((c: { id: string }) => c.id),
    [made[1].id],
  );
  t.regex(page.headers.get('link') ?? '', /rel="next"/);
  t.is((await api(`/api/customers?limit=1&startingAfter=${made[1].id}`)).headers.get('link'), null);
  t.is((await api('/api/customers?startingAfter=nope')).status, 400);
});

test('PUT changes only the fields sent; null clears an optional field', async (t) => {
  const c = await create({ company: 'Old Co', tier: 'starter', taxId: 'T1' });
  // Derived fields are read-only: refused (D-90), and the PUT without them changes only what it sends.
  const derived = await api(`/api/customers/${c.id}`, {
    method: 'PUT',
    body: { company: 'New Co', healthScore: 3, creditBalance: '99' },
  });
  t.deepEqual(
    derived.body.error.details.map((d: { path: string }) => d.path),
    ['healthScore', 'creditBalance'],
  );
  const res = await api(`/api/customers/${c.id}`, { method: 'PUT', body: { company: 'New Co', tier: null } });
  t.is(res.status, 200);
  t.like(res.body, {
    id: c.id,
    name: c.name,
    email: c.email,
    company: 'New Co',
    tier: null,
    taxId: 'T1',
    healthScore: 100,
    creditBalance: '0.00',
  });
  const read = await api(`/api/customers/${c.id}`);
  t.deepEqual(read.body, { ...res.body, subscriptions: [] });
  const renamed = await api(`/api/customers/${c.id}`, {
    method: 'PUT',
    body: { name: 'Renamed', email: 'renamed@example.test' },
  });
  t.like(renamed.body, { name: 'Renamed', email: 'renamed@example.test', company: 'New Co' });
});

test(
  'an email used by another customer in any case is 409 email_taken, ' + 'on POST and PUT, and changes nothing',
  async (t) => {
    const taken = await create({ email: 'John@X.io' });
    const dup = await api('/api/customers', { body: { name: 'Dup', email: 'john@x.IO' } });
    t.is(dup.status, 409);
    t.is(dup.body.error.code, 'email_taken');
    t.is(await app.db('customers').where({ name: 'Dup' }).first(), undefined);

    const other = await create({ name: 'Other' });
    const put = await api(`/api/customers/${other.id}`, {
      method: 'PUT',
      body: { name: 'Changed', email: ' JOHN@x.io ' },
    });
    t.is(put.status, 409);
    t.is(put.body.error.code, 'email_taken');
    t.deepEqual((await api(`/api/customers/${other.id}`)).body, { ...other, subscriptions: [] });

    // The customer's own address in another case is not a conflict.
    const self = await api(`/api/customers/${taken.id}`, { method: 'PUT', body: { email: 'JOHN@X.IO' } });
    t.is(self.status, 200);
    t.is(self.body.email, 'JOHN@X.IO');
  },
);

test('validation names every bad field and creates nothing', async (t) => {
  const res = await api('/api/customers', {
    body: { name: 'Invalid Inc', email: 'not-an-email', tier: 'gold', company: 7, taxId: 'x'.repeat(101) },
  });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'invalid_request');
  t.deepEqual(paths(res), ['company', 'email', 'taxId', 'tier']);
  t.deepEqual(paths(await api('/api/customers', { body: {} })), ['email', 'name']);
  t.deepEqual(paths(await api('/api/customers', { body: { name: '', email: '' } })), ['email', 'name']);
  t.is(await app.db('customers').where({ name: 'Invalid Inc' }).first(), undefined);
});

test('a refused PUT changes nothing', async (t) => {
  const c = await create({ tier: 'professional' });
  const res = await api(`/api/customers/${c.id}`, {
    method: 'PUT',
    body: { name: 'Changed', email: 'bad', tier: 'platinum' },
  });
  t.is(res.status, 400);
  t.deepEqual(paths(res), ['email', 'tier']);
  t.is((await api(`/api/customers/${c.id}`, { method: 'PUT', body: { name: null } })).status, 400);
  t.deepEqual((await api(`/api/customers/${c.id}`)).body, { ...c, subscriptions: [] });
});

test('DELETE answers 204, the customer is gone and its API keys with it', async (t) => {
  const c = await create();
  const key = await api('/api/api-keys', { body: { name: 'k', customerId: c.id } });
  t.is(key.status, 201);
  const res = await api(`/api/customers/${c.id}`, { method: 'DELETE' });
  t.is(res.status, 204);
  t.is((await api(`/api/customers/${c.id}`)).status, 404);
  t.is((await request(app.baseUrl, '/api/v1/customer', { bearer: key.body.key })).status, 401);
});

test('unknown and malformed ids are 404 on GET, PUT and DELETE', async (t) => {
  for (const id of [randomUUID(), 'not-a-uuid']) {
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await api(`/api/customers/${id}`, { method, body });
      t.is(res.status, 404, `${method} ${id}`);
      t.is(res.body.error.code, 'not_found');
    }
  }
});

test('every customer route refuses a request without a session cookie (401) and changes nothing', async (t) => {
  const c = await create({ name: 'Guarded' });
  const attempts: [string, string, unknown][] = [
    ['GET', '/api/customers', undefined],
    ['GET', `/api/customers/${c.id}`, undefined],
    ['POST', '/api/customers', { name: 'Intruder', email: 'intruder@example.test' }],
    ['PUT', `/api/customers/${c.id}`, { name: 'Hijacked' }],
    ['DELETE', `/api/customers/${c.id}`, undefined],
    ['GET', '/api/search/customers?q=guarded', undefined],
  ];
  for (const [method, path, body] of attempts) {
    const res = await request(app.baseUrl, path, { method, body });
    t.is(res.status, 401, `${method} ${path}`);
    t.is(res.body.error.code, 'unauthenticated');
  }
  t.deepEqual((await api(`/api/customers/${c.id}`)).body, { ...c, subscriptions: [] });
  t.is(await app.db('customers').where({ name: 'Intruder' }).first(), undefined);
});
