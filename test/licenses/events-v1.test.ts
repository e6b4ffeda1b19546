/**
 * License events (D-32, D-74): license.created on issue, expireLicenses storing `expired` and recording
 * license.expired once per expiry; and the v1 view of a customer's licenses and products (D-15, D-22).
 */
import test from 'ava';
import { expireLicenses } from '../../src/licenses/expiry.ts';
import { request } from '../helpers/http.ts';
import {
  createCustomer,
  createProduct,
  getLicense,
  inDays,
  issueLicense,
  licenseEvents,
  startLicenseApp,
  updateLicense,
  validate,
  type License,
  type LicenseKit,
} from './fixtures.ts';

let kit: LicenseKit;
test.before(async () => {
  kit = await startLicenseApp();
});
test.after.always(async () => kit?.close());

const payloadOf = (l: License, status: string) => ({
  licenseId: l.id,
  licenseKey: l.licenseKey,
  customerId: l.customerId,
  productId: l.productId,
  status,
  expiresAt: l.expiresAt,
});
const storedStatus = async (id: string) => (await kit.app.db('licenses').where({ id }).first()).status;
const DAY = 86_400_000;

test(
  'license.created is recorded on create with {licenseId, ' + 'licenseKey, customerId, productId, status, expiresAt}',
  async (t) => {
    const l = await issueLicense(kit, { expiresAt: inDays(90), maxActivations: 2, features: { pro: true } });
    const events = await licenseEvents(kit, 'license.created', l.id);
    t.is(events.length, 1);
    t.regex(events[0]!.id, /^evt_/);
    t.is(events[0]!.type, 'license.created');
    t.deepEqual(events[0]!.data, payloadOf(l, 'active'));
    // Other license changes are no license.created.
    await updateLicense(kit, l.licenseKey, { status: 'suspended' });
    await validate(kit, l.licenseKey, 'd');
    t.is((await licenseEvents(kit, 'license.created', l.id)).length, 1);
  },
);

test.serial('a refused create records no event', async (t) => {
  const before = (await kit.admin('/api/billing/events?type=license.created&limit=500')).body.length;
  const product = await createProduct(kit);
  const res = await kit.admin('/api/licenses', {
    body: { customerId: '00000000-0000-4000-8000-000000000000', productId: product.id },
  });
  t.is(res.status, 400);
  t.is((await kit.admin('/api/billing/events?type=license.created&limit=500')).body.length, before);
});

// Serial: expireLicenses sweeps the whole table; these run before the concurrent tests add licenses.
test.serial(
  'expireLicenses stores expired and records license.expired once; a second sweep records nothing',
  async (t) => {
    const l = await issueLicense(kit, { expiresAt: inDays(-1) });
    t.is(await storedStatus(l.id), 'active');
    t.true((await expireLicenses(kit.app.db, new Date())) >= 1);
    t.is(await storedStatus(l.id), 'expired');
    const events = await licenseEvents(kit, 'license.expired', l.id);
    t.is(events.length, 1);
    t.deepEqual(events[0]!.data, payloadOf(l, 'expired'));

    t.is(await expireLicenses(kit.app.db, new Date()), 0);
    t.is((await licenseEvents(kit, 'license.expired', l.id)).length, 1);
    t.is((await getLicense(kit, l.licenseKey)).status, 'expired');
  },
);

test.serial('a renewed license that expires again records license.expired again', async (t) => {
  const l = await issueLicense(kit, { expiresAt: inDays(-1) });
  await expireLicenses(kit.app.db, new Date());
  const renewed = await updateLicense(kit, l.licenseKey, { expiresAt: inDays(1) });
  t.is(renewed.status, 'active');
  t.is(await storedStatus(l.id), 'active');
  // Nothing is due yet.
  await expireLicenses(kit.app.db, new Date());
  t.is((await licenseEvents(kit, 'license.expired', l.id)).length, 1);

  // The sweep of two days later (D-81 moves time with asOf).
  await expireLicenses(kit.app.db, new Date(Date.now() + 2 * DAY));
  const events = await licenseEvents(kit, 'license.expired', l.id);
  t.is(events.length, 2);
  t.deepEqual(events[1]!.data, payloadOf(renewed, 'expired'));
  t.is(await storedStatus(l.id), 'expired');
});

test.serial(
  'an expired license set active or suspended without a new date stays expired and is not recorded again',
  async (t) => {
    const l = await issueLicense(kit, { expiresAt: inDays(-1) });
    await expireLicenses(kit.app.db, new Date());
    for (const status of ['active', 'suspended', 'active']) {
      const res = await kit.admin(`/api/licenses/${l.licenseKey}`, { method: 'PUT', body: { status } });
      t.is(res.status, 200, status);
      t.is(res.body.status, 'expired', status);
      t.is(await storedStatus(l.id), 'expired', status);
      await expireLicenses(kit.app.db, new Date());
    }
    t.is((await licenseEvents(kit, 'license.expired', l.id)).length, 1);
    // Revoking is still stored, and a revoked license is never swept.
    t.is((await updateLicense(kit, l.licenseKey, { status: 'revoked' })).status, 'revoked');
    t.is(await storedStatus(l.id), 'revoked');
  },
);

test.serial('expireLicenses leaves future dates, undated, suspended and revoked licenses alone', async (t) => {
  const future = await issueLicense(kit, { expiresAt: inDays(5) });
  const undated = await issueLicense(kit);
  const suspended = await issueLicense(kit, { expiresAt: inDays(-1) });
  await updateLicense(kit, suspended.licenseKey, { status: 'suspended' });
  const revoked = await issueLicense(kit, { expiresAt: inDays(-1) });
  await updateLicense(kit, revoked.licenseKey, { status: 'revoked' });
  await expireLicenses(kit.app.db, new Date());
  for (const [l, status] of [
    [future, 'active'],
    [undated, 'active'],
    [suspended, 'suspended'],
    [revoked, 'revoked'],
  ] as const) {
    t.is(await storedStatus(l.id), status);
    t.deepEqual(await licenseEvents(kit, 'license.expired', l.id), []);
  }
});

test.serial('expireLicenses works in batches and two sweeps at once record each expiry once', async (t) => {
  const due = [];
  for (let i = 0; i < 7; i++) due.push(await issueLicense(kit, { expiresAt: inDays(-1 - i) }));
  const [a, b] = await Promise.all([
    expireLicenses(kit.app.db, new Date(), 3),
    expireLicenses(kit.app.db, new Date(), 3),
  ]);
  t.true(a + b >= 7);
  for (const l of due) {
    t.is(await storedStatus(l.id), 'expired');
    t.is((await licenseEvents(kit, 'license.expired', l.id)).length, 1, l.licenseKey);
  }
});

async function apiKeyFor(customerId: string): Promise<string> {
  const res = await kit.admin('/api/api-keys', { body: { name: 'license client', customerId } });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${res.text}`);
  return res.body.key;
}

test('GET /api/v1/licenses lists only the key customer’s licenses, in the admin shape, with paging', async (t) => {
  const a = await createCustomer(kit, 'V1 Alpha');
  const b = await createCustomer(kit, 'V1 Beta');
  const product = await createProduct(kit, 'V1 Licensed App');
  const a1 = await issueLicense(kit, { customerId: a.id, productId: product.id, maxActivations: 3 });
  const a2 = await issueLicense(kit, { customerId: a.id, productId: product.id, expiresAt: inDays(-1) });
  const b1 = await issueLicense(kit, { customerId: b.id, productId: product.id });
  const keyA = await apiKeyFor(a.id);

  const res = await request(kit.app.baseUrl, '/api/v1/licenses', { bearer: keyA });
  t.is(res.status, 200);
  t.deepEqual(res.body, [await getLicense(kit, a1.licenseKey), await getLicense(kit, a2.licenseKey)]);
  t.is(res.body[1].status, 'expired');
  t.false(res.body.some((l: { id: string }) => l.id === b1.id));
  // A filter in the query cannot point the key at another customer: v1 has no such parameter (D-90: refused).
  const foreign = await request(kit.app.baseUrl, `/api/v1/licenses?customerId=${b.id}`, { bearer: keyA });
  t.is(foreign.status, 400);
  t.deepEqual(foreign.body.error.details, [{ path: 'query.customerId', message: 'unknown field' }]);

  const page = await request(kit.app.baseUrl, '/api/v1/licenses?limit=1', { bearer: keyA });
  t.deepEqual(
    page.body.map((l: License) => l.id),
    [a1.id],
  );
  t.regex(page.headers.get('link') ?? '', new RegExp(`startingAfter=${a1.id}.*rel="next"`));

  t.deepEqual(
    (await request(kit.app.baseUrl, '/api/v1/licenses', { bearer: await apiKeyFor(b.id) })).body.map(
      (l: License) => l.id,
    ),
    [b1.id],
  );
});

test('GET /api/v1/licenses refuses no key, a bad key and an admin cookie (401)', async (t) => {
  for (const options of [{}, { bearer: 'bsk_not-a-real-key' }, { cookie: kit.cookie }]) {
    const res = await request(kit.app.baseUrl, '/api/v1/licenses', options);
    t.is(res.status, 401);
    t.is(res.body.error.code, 'unauthenticated');
  }
});

test(
  'a license makes its product one of the customer’s: ' + 'v1 products and the admin customer read show it',
  async (t) => {
    const customer = await createCustomer(kit, 'Product Owner');
    const licensed = await createProduct(kit, 'Owned App');
    const notOurs = await createProduct(kit, 'Someone Else’s App');
    await issueLicense(kit, { productId: notOurs.id });
    const key = await apiKeyFor(customer.id);
    t.deepEqual((await request(kit.app.baseUrl, '/api/v1/products', { bearer: key })).body, []);

    await issueLicense(kit, { customerId: customer.id, productId: licensed.id });
    const v1 = await request(kit.app.baseUrl, '/api/v1/products', { bearer: key });
    t.is(v1.status, 200);
    t.deepEqual(
      v1.body.map((p: { id: string }) => p.id),
      [licensed.id],
    );
    t.like(v1.body[0], { name: 'Owned App', productType: 'licensed' });

    const admin = await kit.admin(`/api/customers/${customer.id}`);
    t.is(admin.status, 200);
    t.deepEqual(admin.body.products, [{ id: licensed.id, name: 'Owned App', productType: 'licensed' }]);
  },
);

test('two licenses of one product list that product once (v1 products, admin customer read)', async (t) => {
  const customer = await createCustomer(kit, 'Two Seats');
  const licensed = await createProduct(kit, 'Twice Licensed');
  await issueLicense(kit, { customerId: customer.id, productId: licensed.id });
  await issueLicense(kit, { customerId: customer.id, productId: licensed.id });
  const v1 = await request(kit.app.baseUrl, '/api/v1/products', { bearer: await apiKeyFor(customer.id) });
  t.deepEqual(
    v1.body.map((p: { id: string }) => p.id),
    [licensed.id],
  );
  t.deepEqual(
    (await kit.admin(`/api/customers/${customer.id}`)).body.products.map((p: { id: string }) => p.id),
    [licensed.id],
  );
});
