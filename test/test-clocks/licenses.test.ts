/**
 * TC-2, "licenses expire by it": a clock customer's license is judged by the clock's time, not today's, in every
 * reading (the answer, verify, validate, heartbeat-free checks, the list's filters): active while the clock is before
 * its date, whatever today is; expired once an advance passes the date, or from birth when the date is behind the
 * clock; a PUT moving the date behind the clock expires it. A real customer's license still goes by today.
 */
import test from 'ava';
import type { TestApp } from '../helpers/app.ts';
import { advance, api, clockCustomer, createClock, eventsOfCustomer, startClockApp } from './fixtures.ts';

let app: TestApp;
let cookie: string;
let productId: string;
test.before(async () => {
  ({ app, cookie } = await startClockApp());
  const product = await api(app, cookie, '/api/products', {
    body: { name: 'Clocked app', productType: 'licensed', price: '10.00' },
  });
  if (product.status !== 201) throw new Error(product.text);
  productId = product.body.id;
});
test.after.always(async () => app?.close());

const license = async (customerId: string, expiresAt: string) => {
  const res = await api(app, cookie, '/api/licenses', { body: { customerId, productId, expiresAt } });
  if (res.status !== 201) throw new Error(`license: ${res.status} ${res.text}`);
  return res.body as { id: string; licenseKey: string; status: string; createdAt: string };
};
const read = async (key: string) => (await api(app, cookie, `/api/licenses/${key}`)).body.status as string;
const verify = async (key: string) =>
  (await api(app, cookie, '/api/licenses/verify', { body: { licenseKey: key } })).body as Record<string, unknown>;
const validate = async (key: string, deviceId = 'laptop') =>
  (await api(app, cookie, '/api/licenses/validate', { body: { licenseKey: key, deviceId, deviceName: deviceId } }))
    .body as Record<string, unknown>;
const listed = async (customerId: string, status: string) =>
  (await api(app, cookie, `/api/licenses?customerId=${customerId}&status=${status}`)).body.map(
    (l: { licenseKey: string }) => l.licenseKey,
  );

test('a clock in the past: the license is active until an advance passes its date, whatever today is', async (t) => {
  const clock = await createClock(app, cookie, '2026-01-01T00:00:00Z');
  const customer = await clockCustomer(app, cookie, clock.id);
  const lic = await license(customer.id, '2026-02-01T00:00:00Z');
  t.is(lic.status, 'active', "a date ahead of the clock, though behind today's");
  t.is(lic.createdAt, '2026-01-01T00:00:00.000Z', 'dated by the clock');
  t.is(await read(lic.licenseKey), 'active');
  t.is((await verify(lic.licenseKey)).valid, true);
  t.is((await validate(lic.licenseKey)).valid, true);
  t.deepEqual(await listed(customer.id, 'active'), [lic.licenseKey]);
  t.deepEqual(await listed(customer.id, 'expired'), []);

  await advance(app, cookie, clock.id, '2026-01-20T00:00:00Z');
  t.is(await read(lic.licenseKey), 'active', 'the clock has not reached the date');
  await advance(app, cookie, clock.id, '2026-02-02T00:00:00Z');
  t.is(await read(lic.licenseKey), 'expired');
  t.is((await validate(lic.licenseKey, 'desk')).error, 'license_expired');
  t.deepEqual(await listed(customer.id, 'expired'), [lic.licenseKey]);
  const expired = (await eventsOfCustomer(app.db, customer.id)).filter((e) => e.type === 'license.expired');
  t.is(expired.length, 1);
});

test('a clock ahead of today: a date behind the clock is expired from birth, told once', async (t) => {
  const ahead = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
  const clock = await createClock(app, cookie, ahead(400));
  const customer = await clockCustomer(app, cookie, clock.id);
  const lic = await license(customer.id, ahead(200));
  t.is(lic.status, 'expired');
  t.is(await read(lic.licenseKey), 'expired');
  t.is((await verify(lic.licenseKey)).valid, false);
  t.is((await validate(lic.licenseKey)).error, 'license_expired');
  const types = (await eventsOfCustomer(app.db, customer.id)).map((e) => e.type);
  t.deepEqual(
    types.filter((type) => type.startsWith('license.')),
    ['license.created', 'license.expired'],
  );

  const live = await license(customer.id, ahead(500));
  t.is(live.status, 'active');
  const moved = await api(app, cookie, `/api/licenses/${live.licenseKey}`, {
    method: 'PUT',
    body: { expiresAt: ahead(300) },
  });
  t.is(moved.status, 200);
  t.is(moved.body.status, 'expired', 'a date moved behind the clock expires it at once');
  const renewed = await api(app, cookie, `/api/licenses/${live.licenseKey}`, {
    method: 'PUT',
    body: { expiresAt: ahead(600) },
  });
  t.is(renewed.body.status, 'active', 'a date ahead of the clock renews it');
});

test("a real customer's license still goes by today's date", async (t) => {
  const customer = await clockCustomer(app, cookie, null);
  const lic = await license(customer.id, new Date(Date.now() - 60_000).toISOString());
  t.is(lic.status, 'expired');
  t.is((await validate(lic.licenseKey)).error, 'license_expired');
});
