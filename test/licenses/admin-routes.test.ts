/**
 * Admin license routes (interface.md, Licenses; D-5, D-21, D-31, D-35): create, read, update, delete,
 * activations, the list with filters and paging, bad input, and the session requirement.
 */
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { request, type Json, type JsonResponse } from '../helpers/http.ts';
import {
  activationRows,
  createCustomer,
  createProduct,
  DEFAULT_KEY_PATTERN,
  getLicense,
  inDays,
  issueLicense,
  licenseEvents,
  startLicenseApp,
  tableCounts,
  updateLicense,
  validate,
  type LicenseKit,
} from './fixtures.ts';

let kit: LicenseKit;
test.before(async () => {
  kit = await startLicenseApp();
});
test.after.always(async () => kit?.close());

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const paths = (res: { body: Json }) => res.body.error.details.map((d: { path: string }) => d.path).sort();

test('POST /api/licenses answers 201 with the generated key and the defaults', async (t) => {
  const customer = await createCustomer(kit);
  const product = await createProduct(kit);
  const res = await kit.admin('/api/licenses', { body: { customerId: customer.id, productId: product.id } });
  t.is(res.status, 201);
  const l = res.body;
  t.deepEqual(Object.keys(l).sort(), [
    'createdAt',
    'currentActivations',
    'customerId',
    'expiresAt',
    'features',
    'heartbeatIntervalSeconds',
    'id',
    'licenseKey',
    'maxActivations',
    'productId',
    'status',
    'updatedAt',
  ]);
  t.regex(l.id, /^[0-9a-f-]{36}$/);
  t.regex(l.licenseKey, DEFAULT_KEY_PATTERN);
  t.like(l, {
    customerId: customer.id,
    productId: product.id,
    status: 'active',
    maxActivations: null,
    currentActivations: 0,
    features: {},
    expiresAt: null,
  });
  t.regex(l.createdAt, ISO);
  t.deepEqual(await getLicense(kit, l.licenseKey), l);
});

test('POST takes maxActivations, features and expiresAt (a date alone is midnight UTC)', async (t) => {
  const features = { sso: true, seats: 25, ratio: 0.5, modules: ['a', 'b'], none: [] };
  const l = await issueLicense(kit, { maxActivations: 7, features, expiresAt: '2999-01-31' });
  t.like(l, { maxActivations: 7, features, expiresAt: '2999-01-31T00:00:00.000Z', status: 'active' });
  const withTime = await issueLicense(kit, { expiresAt: '2999-06-01T12:30:00+02:00' });
  t.is(withTime.expiresAt, '2999-06-01T10:30:00.000Z');
});

test(
  'PUT changes only the fields sent; features are replaced whole; ' + 'null clears expiresAt and the limit',
  async (t) => {
    const l = await issueLicense(kit, { maxActivations: 3, features: { a: true, b: 1 }, expiresAt: inDays(10) });
    const res = await kit.admin(`/api/licenses/${l.licenseKey}`, { method: 'PUT', body: { features: { c: ['x'] } } });
    t.is(res.status, 200);
    t.like(res.body, {
      id: l.id,
      licenseKey: l.licenseKey,
      maxActivations: 3,
      features: { c: ['x'] },
      expiresAt: l.expiresAt,
      status: 'active',
    });
    t.deepEqual(res.body.features, { c: ['x'] });
    t.true(res.body.updatedAt >= l.updatedAt);
    const cleared = await updateLicense(kit, l.licenseKey, { maxActivations: null, expiresAt: null });
    t.like(cleared, { maxActivations: null, expiresAt: null, features: { c: ['x'] } });
    const empty = await kit.admin(`/api/licenses/${l.licenseKey}`, { method: 'PUT', body: {} });
    t.is(empty.status, 200);
    t.deepEqual(empty.body, cleared);
    t.deepEqual(await getLicense(kit, l.licenseKey), cleared);
  },
);

test('DELETE /api/licenses/:key answers 204, removes the license and its activations, keeps its events', async (t) => {
  const l = await issueLicense(kit, { maxActivations: 3 });
  await validate(kit, l.licenseKey, 'd1');
  await validate(kit, l.licenseKey, 'd2');
  const res = await kit.admin(`/api/licenses/${l.licenseKey}`, { method: 'DELETE' });
  t.is(res.status, 204);
  t.is(res.text, '');
  t.is((await kit.admin(`/api/licenses/${l.licenseKey}`)).status, 404);
  t.is(await activationRows(kit.app.db, l.id), 0);
  t.is((await licenseEvents(kit, 'license.created', l.id)).length, 1);
  t.deepEqual((await request(kit.app.baseUrl, '/api/licenses/verify', { body: { licenseKey: l.licenseKey } })).body, {
    valid: false,
    error: 'license_not_found',
  });
  t.is((await kit.admin(`/api/licenses/${l.licenseKey}`, { method: 'DELETE' })).status, 404);
});

test(
  'GET /api/licenses/:key/activations lists {deviceId, ' + 'deviceName, activatedAt, lastSeenAt} in activation order',
  async (t) => {
    const l = await issueLicense(kit);
    t.deepEqual((await kit.admin(`/api/licenses/${l.licenseKey}/activations`)).body, []);
    await validate(kit, l.licenseKey, 'first', 'First PC');
    await validate(kit, l.licenseKey, 'second', 'Second PC');
    const res = await kit.admin(`/api/licenses/${l.licenseKey}/activations`);
    t.is(res.status, 200);
    t.deepEqual(
      res.body.map((a: { deviceId: string; deviceName: string }) => [a.deviceId, a.deviceName]),
      [
        ['first', 'First PC'],
        ['second', 'Second PC'],
      ],
    );
    for (const a of res.body) {
      t.deepEqual(Object.keys(a).sort(), ['activatedAt', 'deviceId', 'deviceName', 'lastSeenAt']);
      t.regex(a.activatedAt, ISO);
      t.regex(a.lastSeenAt, ISO);
    }
  },
);

test('an unknown or malformed key is 404 not_found on GET, PUT, DELETE and the activation routes', async (t) => {
  for (const key of ['LIC-0000-0000-0000', 'nonsense', '%20', 'x'.repeat(101)]) {
    for (const [method, path, body] of [
      ['GET', `/api/licenses/${key}`, undefined],
      ['PUT', `/api/licenses/${key}`, { status: 'suspended' }],
      ['DELETE', `/api/licenses/${key}`, undefined],
      ['GET', `/api/licenses/${key}/activations`, undefined],
      ['DELETE', `/api/licenses/${key}/activations/device`, undefined],
    ] as const) {
      const res = await kit.admin(path, { method, body });
      t.is(res.status, 404, `${method} ${path}`);
      t.is(res.body.error.code, 'not_found', `${method} ${path}`);
    }
  }
});

// Serial: whole-table counts, and paging over a list no concurrent test adds to mid-page.
test.serial('bad create bodies are 400 with the documented code and create nothing', async (t) => {
  const customer = await createCustomer(kit);
  const product = await createProduct(kit);
  const ok = { customerId: customer.id, productId: product.id };
  const tooMany = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}`, true]));
  const cases: [Record<string, unknown>, string, string[]][] = [
    [{ ...ok, maxActivations: 0 }, 'invalid_request', ['maxActivations']],
    [{ ...ok, maxActivations: -1 }, 'invalid_request', ['maxActivations']],
    [{ ...ok, maxActivations: 1.5 }, 'invalid_request', ['maxActivations']],
    [{ ...ok, maxActivations: '5' }, 'invalid_request', ['maxActivations']],
    [{ ...ok, maxActivations: true }, 'invalid_request', ['maxActivations']],
    [{ ...ok, features: { nested: { deep: true } } }, 'invalid_request', ['features.nested']],
    [{ ...ok, features: { list: [{ a: 1 }] } }, 'invalid_request', ['features.list']],
    [{ ...ok, features: { nums: [1, 2] } }, 'invalid_request', ['features.nums']],
    [{ ...ok, features: { text: 'yes' } }, 'invalid_request', ['features.text']],
    [{ ...ok, features: { nothing: null } }, 'invalid_request', ['features.nothing']],
    [{ ...ok, features: tooMany }, 'invalid_request', ['features']],
    [{ ...ok, features: ['a'] }, 'invalid_request', ['features']],
    [{ ...ok, features: 'pro' }, 'invalid_request', ['features']],
    [{ ...ok, expiresAt: 'next tuesday' }, 'invalid_request', ['expiresAt']],
    [{ ...ok, expiresAt: 1893456000 }, 'invalid_request', ['expiresAt']],
    [{ productId: product.id }, 'invalid_request', ['customerId']],
    [{ customerId: customer.id }, 'invalid_request', ['productId']],
    [{ ...ok, customerId: 'not-a-uuid' }, 'invalid_request', ['customerId']],
    [{ ...ok, customerId: randomUUID() }, 'customer_not_found', ['customerId']],
    [{ ...ok, productId: randomUUID() }, 'product_not_found', ['productId']],
  ];
  const before = await tableCounts(kit.app.db);
  for (const [body, code, detailPaths] of cases) {
    const res = await kit.admin('/api/licenses', { body });
    const label = JSON.stringify(body).slice(0, 120);
    t.is(res.status, 400, label);
    t.is(res.body.error.code, code, label);
    t.deepEqual(paths(res), detailPaths, label);
  }
  t.deepEqual(await tableCounts(kit.app.db), before);
});

test.serial('bad PUT bodies are 400 and change nothing', async (t) => {
  const l = await issueLicense(kit, { maxActivations: 2, features: { keep: true } });
  for (const body of [
    { maxActivations: 0 },
    { maxActivations: -1 },
    { maxActivations: 1.5 },
    { maxActivations: '5' },
    { features: { nested: { x: 1 } } },
    { status: 'paused' },
    { status: 'expired' },
    { expiresAt: 'soon' },
    { maxActivations: 5, status: 'bogus' },
  ]) {
    const res = await kit.admin(`/api/licenses/${l.licenseKey}`, { method: 'PUT', body });
    t.is(res.status, 400, JSON.stringify(body));
    t.is(res.body.error.code, 'invalid_request');
  }
  t.deepEqual(await getLicense(kit, l.licenseKey), l);
});

test('features at the limits: 100 keys and 100-string arrays are accepted', async (t) => {
  const hundred = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, i % 2 === 0]));
  t.is(Object.keys((await issueLicense(kit, { features: hundred })).features).length, 100);
  const list = Array.from({ length: 100 }, (_, i) => `m${i}`);
  t.deepEqual((await issueLicense(kit, { features: { modules: list } })).features.modules, list);
});

test('maxActivations null is unlimited on create and on update', async (t) => {
  const l = await issueLicense(kit, { maxActivations: null });
  t.is(l.maxActivations, null);
  const capped = await updateLicense(kit, l.licenseKey, { maxActivations: 1 });
  t.is(capped.maxActivations, 1);
  t.is((await updateLicense(kit, l.licenseKey, { maxActivations: null })).maxActivations, null);
});

test.serial('GET /api/licenses filters by customerId, productId and status', async (t) => {
  const customer = await createCustomer(kit, 'Filter Co');
  const other = await createCustomer(kit, 'Other Co');
  const productA = await createProduct(kit, 'Filter A');
  const productB = await createProduct(kit, 'Filter B');
  const active = await issueLicense(kit, { customerId: customer.id, productId: productA.id });
  const suspended = await issueLicense(kit, { customerId: customer.id, productId: productB.id });
  await updateLicense(kit, suspended.licenseKey, { status: 'suspended' });
  const expired = await issueLicense(kit, { customerId: customer.id, productId: productA.id, expiresAt: inDays(-1) });
  const revoked = await issueLicense(kit, { customerId: customer.id, productId: productB.id });
  await updateLicense(kit, revoked.licenseKey, { status: 'revoked' });
  const elsewhere = await issueLicense(kit, { customerId: other.id, productId: productA.id });

  const ids = async (query: string) => {
    const res = await kit.admin(`/api/licenses?${query}`);
    t.is(res.status, 200, query);
    return res.body.map((l: { id: string }) => l.id);
  };
  t.deepEqual(await ids(`customerId=${customer.id}`), [active.id, suspended.id, expired.id, revoked.id]);
  t.deepEqual(await ids(`productId=${productA.id}`), [active.id, expired.id, elsewhere.id]);
  t.deepEqual(await ids(`customerId=${customer.id}&productId=${productB.id}`), [suspended.id, revoked.id]);
  t.deepEqual(await ids(`customerId=${customer.id}&status=active`), [active.id]);
  t.deepEqual(await ids(`customerId=${customer.id}&status=suspended`), [suspended.id]);
  t.deepEqual(await ids(`customerId=${customer.id}&status=expired`), [expired.id]);
  t.deepEqual(await ids(`customerId=${customer.id}&status=revoked`), [revoked.id]);
  t.deepEqual(await ids(`customerId=${randomUUID()}`), []);
  // The listed status is the effective one (D-32).
  const listed = (await kit.admin(`/api/licenses?customerId=${customer.id}`)).body;
  t.deepEqual(
    listed.map((l: { status: string }) => l.status),
    ['active', 'suspended', 'expired', 'revoked'],
  );

  for (const bad of ['status=paused', 'customerId=nope', 'productId=1', 'limit=0', 'limit=501', 'startingAfter=x']) {
    const res = await kit.admin(`/api/licenses?${bad}`);
    t.is(res.status, 400, bad);
    t.is(res.body.error.code, 'invalid_request');
  }
});

test.serial('GET /api/licenses pages in creation order with limit and a Link header (D-5)', async (t) => {
  const customer = await createCustomer(kit, 'Paging Co');
  const made = [];
  for (let i = 0; i < 5; i++) made.push(await issueLicense(kit, { customerId: customer.id }));
  const seen: string[] = [];
  let next: string | undefined = `/api/licenses?customerId=${customer.id}&limit=2`;
  let pages = 0;
  while (next) {
    const res: JsonResponse = await kit.admin(next);
    t.is(res.status, 200);
    seen.push(...res.body.map((l: { id: string }) => l.id));
    pages += 1;
    const link: string | null = res.headers.get('link');
    next = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined;
    if (link) t.truthy(next, link);
  }
  t.is(pages, 3);
  t.deepEqual(
    seen,
    made.map((l) => l.id),
  );
  const all = await kit.admin('/api/licenses?limit=500');
  t.is(all.headers.get('link'), null);
});

test.serial(
  'every admin license route refuses a request without a session cookie (401) and changes nothing',
  async (t) => {
    const l = await issueLicense(kit, { maxActivations: 2 });
    await validate(kit, l.licenseKey, 'dev');
    const license = await getLicense(kit, l.licenseKey);
    const before = await tableCounts(kit.app.db);
    const attempts: [string, string, unknown][] = [
      ['GET', '/api/licenses', undefined],
      ['POST', '/api/licenses', { customerId: l.customerId, productId: l.productId }],
      ['GET', `/api/licenses/${l.licenseKey}`, undefined],
      ['PUT', `/api/licenses/${l.licenseKey}`, { status: 'revoked' }],
      ['DELETE', `/api/licenses/${l.licenseKey}`, undefined],
      ['GET', `/api/licenses/${l.licenseKey}/activations`, undefined],
      ['DELETE', `/api/licenses/${l.licenseKey}/activations/dev`, undefined],
    ];
    for (const [method, path, body] of attempts) {
      for (const cookie of [undefined, 'session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
        const res = await request(kit.app.baseUrl, path, { method, body, cookie });
        t.is(res.status, 401, `${method} ${path}`);
        t.is(res.body.error.code, 'unauthenticated');
      }
    }
    t.deepEqual(await tableCounts(kit.app.db), before);
    t.deepEqual(await getLicense(kit, l.licenseKey), license);
    t.is(await activationRows(kit.app.db, l.id), 1);
  },
);

test(
  'deleting a licensed product is 409 product_in_use; ' + 'a customer with licenses is 409 customer_in_use',
  async (t) => {
    const l = await issueLicense(kit);
    const product = await kit.admin(`/api/products/${l.productId}`, { method: 'DELETE' });
    t.is(product.status, 409);
    t.is(product.body.error.code, 'product_in_use');
    const customer = await kit.admin(`/api/customers/${l.customerId}`, { method: 'DELETE' });
    t.is(customer.status, 409);
    t.is(customer.body.error.code, 'customer_in_use');
    t.is((await getLicense(kit, l.licenseKey)).id, l.id);
    // Once the license is gone both may go.
    await kit.admin(`/api/licenses/${l.licenseKey}`, { method: 'DELETE' });
    t.is((await kit.admin(`/api/products/${l.productId}`, { method: 'DELETE' })).status, 204);
    t.is((await kit.admin(`/api/customers/${l.customerId}`, { method: 'DELETE' })).status, 204);
  },
);

test('the constraint names the license service maps to coded errors exist', async (t) => {
  const { rows } = await kit.app.db.raw<{ rows: { conname: string }[] }>(
    `select conname from pg_constraint where conrelid = 'licenses'::regclass order by conname`,
  );
  const names = rows.map((r) => r.conname);
  for (const name of ['licenses_license_key_key', 'licenses_customer_id_fkey', 'licenses_product_id_fkey'])
    t.true(names.includes(name), name);
});
