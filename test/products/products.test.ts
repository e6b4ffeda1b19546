/** Admin product routes (interface.md, Products; D-3, D-5, D-20, D-21): happy paths, errors, security. */
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const api = (path: string, options: Parameters<typeof request>[2] = {}) =>
  request(app.baseUrl, path, { cookie, ...options });
const create = async (body: Record<string, unknown> = {}) => {
  const res = await api('/api/products', { body: { name: 'Widget', productType: 'saas', price: '10', ...body } });
  if (res.status !== 201) throw new Error(`create product: ${res.status} ${res.text}`);
  return res.body;
};

test('POST creates a product with defaults and the documented fields', async (t) => {
  const res = await api('/api/products', {
    body: { name: 'Pro Suite', productType: 'licensed', price: '49.5', description: 'Desktop app' },
  });
  t.is(res.status, 201);
  const p = res.body;
  t.regex(p.id, /^[0-9a-f-]{36}$/);
  t.like(p, {
    name: 'Pro Suite',
    productType: 'licensed',
    description: 'Desktop app',
    price: '49.50',
    status: 'active',
    currency: 'USD',
  });
  t.like(p, { monthlyRevenue: '0.00', activeUsers: 0, dailyActiveUsers: 0, churnRate: '0.0000' });
  t.regex(p.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.regex(p.updatedAt, /Z$/);
  t.deepEqual(Object.keys(p).sort(), [
    'activeUsers',
    'churnRate',
    'createdAt',
    'currency',
    'dailyActiveUsers',
    'description',
    'id',
    'metricsRefreshedAt',
    'monthlyRevenue',
    'name',
    'price',
    'productType',
    'status',
    'updatedAt',
  ]);
  t.deepEqual((await api(`/api/products/${p.id}`)).body, p);
});

test('price is normalised to the currency minor units', async (t) => {
  t.is((await create({ price: '1000', currency: 'jpy' })).price, '1000');
  const jpy = await create({ price: '1000', currency: 'JPY' });
  t.is(jpy.currency, 'JPY');
  t.is(jpy.monthlyRevenue, '0');
  t.is((await create({ price: '1.5', currency: 'BHD' })).price, '1.500');
  t.is((await create({ price: '0' })).price, '0.00');
  // Finer than the currency's minor unit is refused, never rounded (D-91).
  const fine = await api('/api/products', { body: { name: 'Widget', productType: 'saas', price: '19.999' } });
  t.is(fine.status, 400);
  t.is(fine.body.error.code, 'invalid_amount');
  t.is((await create({ price: '123456789012345678901234.25' })).price, '123456789012345678901234.25');
});

test('the derived metrics cannot be set through POST or PUT (refused like unknown fields, D-90)', async (t) => {
  const post = await api('/api/products', {
    body: {
      name: 'Widget',
      productType: 'saas',
      price: '10',
      monthlyRevenue: '999.00',
      activeUsers: 5,
      dailyActiveUsers: 7,
      churnRate: '0.5',
      bogus: true,
    },
  });
  t.is(post.status, 400);
  t.deepEqual(
    post.body.error.details.map((d: { path: string }) => d.path),
    ['monthlyRevenue', 'activeUsers', 'dailyActiveUsers', 'churnRate', 'bogus'],
  );
  const p = await create();
  const put = await api(`/api/products/${p.id}`, { method: 'PUT', body: { monthlyRevenue: '5.00', activeUsers: 3 } });
  t.is(put.status, 400);
  t.like((await api(`/api/products/${p.id}`)).body, { monthlyRevenue: '0.00', activeUsers: 0 });
});

// Serial: ava runs serial tests before the concurrent ones, so no other test adds rows mid-page.
test.serial('GET /api/products lists in creation order and pages with limit and startingAfter (D-5)', async (t) => {
  const tag = randomUUID().slice(0, 8);
  const made = [];
  for (let i = 0; i < 3; i++) made.push(await create({ name: `Paged ${tag} ${i}` }));
  const all = await api('/api/products?limit=500');
  t.is(all.status, 200);
  const ours = all.body.filter((p: { name: string }) => p.name.includes(tag));
  t.deepEqual(
    ours.map((p: { id: string }) => p.id),
    made.map((p) => p.id),
  );

  const first = await api(`/api/products?limit=1&startingAfter=${made[0].id}`);
  t.is(first.body.length, 1);
  t.is(first.body[0].id, made[1].id);
  t.regex(first.headers.get('link') ?? '', new RegExp(`startingAfter=${made[1].id}.*rel="next"`));
  const last = await api(`/api/products?limit=1&startingAfter=${all.body.at(-2).id}`);
  t.is(last.headers.get('link'), null);
  t.is((await api('/api/products?limit=0')).status, 400);
  t.is((await api('/api/products?limit=501')).status, 400);
});

test('PUT changes only the fields sent', async (t) => {
  const p = await create({ name: 'Before', description: 'keep me' });
  const res = await api(`/api/products/${p.id}`, {
    method: 'PUT',
    body: { name: 'After', status: 'archived', price: '12.30' },
  });
  t.is(res.status, 200);
  t.like(res.body, {
    id: p.id,
    name: 'After',
    status: 'archived',
    price: '12.30',
    description: 'keep me',
    productType: 'saas',
    currency: 'USD',
  });
  t.true(res.body.updatedAt >= p.updatedAt);
  t.deepEqual((await api(`/api/products/${p.id}`)).body, res.body);
  const cleared = await api(`/api/products/${p.id}`, { method: 'PUT', body: { description: null } });
  t.is(cleared.body.description, null);
  const empty = await api(`/api/products/${p.id}`, { method: 'PUT', body: {} });
  t.is(empty.status, 200);
  t.deepEqual(empty.body, cleared.body);
});

test('DELETE answers 204 and the product is gone', async (t) => {
  const p = await create();
  const res = await api(`/api/products/${p.id}`, { method: 'DELETE' });
  t.is(res.status, 204);
  t.is(res.text, '');
  t.is((await api(`/api/products/${p.id}`)).status, 404);
});

test('validation names every bad field and creates nothing', async (t) => {
  const res = await api('/api/products', {
    body: {
      name: 'Invalid one',
      productType: 'hardware',
      price: '-1',
      status: 'deleted',
      currency: 'dollars',
      description: 'x'.repeat(5001),
    },
  });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'invalid_request');
  t.deepEqual(res.body.error.details.map((d: { path: string }) => d.path).sort(), [
    'currency',
    'description',
    'price',
    'productType',
    'status',
  ]);
  const blank = await api('/api/products', { body: { name: '  ', productType: 'api', price: '1' } });
  t.deepEqual(blank.body.error.details, [{ path: 'name', message: 'must not be empty' }]);
  const missing = await api('/api/products', { body: {} });
  t.deepEqual(missing.body.error.details.map((d: { path: string }) => d.path).sort(), ['name', 'price', 'productType']);
  t.is(await app.db('products').where({ name: 'Invalid one' }).orWhere({ name: '' }).first(), undefined);
});

test('a JSON number for price is a 400 that says to send a string', async (t) => {
  const res = await api('/api/products', { body: { name: 'Numeric', productType: 'api', price: 10.5 } });
  t.is(res.status, 400);
  t.deepEqual(res.body.error.details, [
    { path: 'price', message: 'must be a decimal string such as "10.00", not a JSON number' },
  ]);
  for (const price of ['1e3', '10.', '.5', 'ten', '']) {
    t.is((await api('/api/products', { body: { name: 'Bad', productType: 'api', price } })).status, 400, price);
  }
  t.is(await app.db('products').whereIn('name', ['Numeric', 'Bad']).first(), undefined);
});

test('a refused PUT changes nothing', async (t) => {
  const p = await create({ name: 'Stable' });
  const res = await api(`/api/products/${p.id}`, { method: 'PUT', body: { name: 'Changed', price: 5 } });
  t.is(res.status, 400);
  t.deepEqual(
    res.body.error.details.map((d: { path: string }) => d.path),
    ['price'],
  );
  const bad = await api(`/api/products/${p.id}`, { method: 'PUT', body: { name: null, productType: 'x' } });
  t.deepEqual(bad.body.error.details.map((d: { path: string }) => d.path).sort(), ['name', 'productType']);
  t.deepEqual((await api(`/api/products/${p.id}`)).body, p);
});

test('unknown and malformed ids are 404 on GET, PUT and DELETE', async (t) => {
  for (const id of [randomUUID(), 'not-a-uuid', '1']) {
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await api(`/api/products/${id}`, { method, body });
      t.is(res.status, 404, `${method} ${id}`);
      t.is(res.body.error.code, 'not_found');
    }
  }
});

test('every product route refuses a request without a session cookie (401) and changes nothing', async (t) => {
  const p = await create({ name: 'Guarded' });
  const attempts: [string, string, unknown][] = [
    ['GET', '/api/products', undefined],
    ['GET', `/api/products/${p.id}`, undefined],
    ['POST', '/api/products', { name: 'Intruder', productType: 'saas', price: '1' }],
    ['PUT', `/api/products/${p.id}`, { name: 'Hijacked' }],
    ['DELETE', `/api/products/${p.id}`, undefined],
  ];
  for (const [method, path, body] of attempts) {
    const res = await request(app.baseUrl, path, { method, body });
    t.is(res.status, 401, `${method} ${path}`);
    t.is(res.body.error.code, 'unauthenticated');
  }
  t.deepEqual((await api(`/api/products/${p.id}`)).body, p);
  t.is(await app.db('products').where({ name: 'Intruder' }).first(), undefined);
});
