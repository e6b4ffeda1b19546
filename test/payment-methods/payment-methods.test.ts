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

const add = (body: Record<string, unknown>) => request(app.baseUrl, '/api/billing/payment-methods', { cookie, body });
const list = async (customerId: string) =>
  (await request(app.baseUrl, `/api/billing/payment-methods?customerId=${customerId}`, { cookie })).body;
const defaults = async (customerId: string) =>
  (await list(customerId))
    .filter((m: { isDefault: boolean }) => m.isDefault)
    .map((m: { providerMethodId: string }) => m.providerMethodId);

test('a payment method answers 201 with the D-56 shape; isDefault defaults to false', async (t) => {
  const customer = await insertCustomer(app.db);
  const res = await add({
    customerId: customer.id,
    type: 'provider_a',
    providerMethodId: 'pm_card_visa',
    isDefault: true,
  });
  t.is(res.status, 201, res.text);
  t.deepEqual(Object.keys(res.body).sort(), ['createdAt', 'customerId', 'id', 'isDefault', 'providerMethodId', 'type']);
  t.like(res.body, { customerId: customer.id, type: 'provider_a', providerMethodId: 'pm_card_visa', isDefault: true });
  const plain = await add({ customerId: customer.id, type: 'provider_b', providerMethodId: 'ewallet_1' });
  t.is(plain.body.isDefault, false);
  t.deepEqual(
    (await list(customer.id)).map((m: { id: string }) => m.id),
    [res.body.id, plain.body.id],
  );
});

test('a new default unsets the old one; deleting the default leaves none', async (t) => {
  const customer = await insertCustomer(app.db);
  const first = await add({ customerId: customer.id, type: 'provider_a', providerMethodId: 'pm_1', isDefault: true });
  await add({ customerId: customer.id, type: 'provider_a', providerMethodId: 'pm_2', isDefault: false });
  t.deepEqual(await defaults(customer.id), ['pm_1']);
  await add({ customerId: customer.id, type: 'provider_c', providerMethodId: 'pm_3', isDefault: true });
  t.deepEqual(await defaults(customer.id), ['pm_3']);
  // Another customer's default is untouched.
  const other = await insertCustomer(app.db);
  await add({ customerId: other.id, type: 'provider_a', providerMethodId: 'pm_1', isDefault: true });
  t.deepEqual(await defaults(customer.id), ['pm_3']);
  t.deepEqual(await defaults(other.id), ['pm_1']);

  const third = (await list(customer.id)).find((m: { providerMethodId: string }) => m.providerMethodId === 'pm_3');
  t.is(
    (await request(app.baseUrl, `/api/billing/payment-methods/${third.id}`, { method: 'DELETE', cookie })).status,
    204,
  );
  t.deepEqual(await defaults(customer.id), []);
  t.is((await list(customer.id)).length, 2);
  t.is(
    (await request(app.baseUrl, `/api/billing/payment-methods/${first.body.id}`, { method: 'DELETE', cookie })).status,
    204,
  );
  t.is(
    (await request(app.baseUrl, `/api/billing/payment-methods/${first.body.id}`, { method: 'DELETE', cookie })).status,
    404,
  );
});

test('20 concurrent new defaults for one customer: all stored, exactly one default', async (t) => {
  const customer = await insertCustomer(app.db);
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      add({ customerId: customer.id, type: 'provider_a', providerMethodId: `pm_${i}`, isDefault: true }),
    ),
  );
  t.true(
    answers.every((r) => r.status === 201),
    answers.map((r) => r.text).join('\n'),
  );
  t.is((await defaults(customer.id)).length, 1);
  t.is((await list(customer.id)).length, 20);
});

test('GET needs customerId (400 without it), pages, and answers [] for a customer without methods', async (t) => {
  const missing = await request(app.baseUrl, '/api/billing/payment-methods', { cookie });
  t.is(missing.status, 400);
  t.is(missing.body.error.code, 'invalid_request');
  t.is(missing.body.error.details[0].path, 'query.customerId');
  t.is((await request(app.baseUrl, '/api/billing/payment-methods?customerId=nope', { cookie })).status, 400);
  const customer = await insertCustomer(app.db);
  t.deepEqual(await list(customer.id), []);
  for (const i of [1, 2, 3]) await add({ customerId: customer.id, type: 'provider_b', providerMethodId: `m${i}` });
  const page = await request(app.baseUrl, `/api/billing/payment-methods?customerId=${customer.id}&limit=2`, { cookie });
  t.is(page.body.length, 2);
  t.regex(page.headers.get('link') ?? '', /customerId=.*startingAfter=.*rel="next"/);
});

test('deleting an unknown or malformed id is 404; the routes need an admin session', async (t) => {
  t.is(
    (
      await request(app.baseUrl, '/api/billing/payment-methods/00000000-0000-4000-8000-000000000000', {
        method: 'DELETE',
        cookie,
      })
    ).status,
    404,
  );
  t.is((await request(app.baseUrl, '/api/billing/payment-methods/x', { method: 'DELETE', cookie })).status, 404);
  t.is(
    (
      await request(app.baseUrl, '/api/billing/payment-methods/00000000-0000-4000-8000-000000000000', {
        method: 'DELETE',
      })
    ).status,
    401,
  );
  t.is((await request(app.baseUrl, '/api/billing/payment-methods', { body: {} })).status, 401);
});

const refusals: [string, (customerId: string) => Record<string, unknown>, number, string][] = [
  [
    'an unknown type',
    (id) => ({ customerId: id, type: 'bank_transfer', providerMethodId: 'x' }),
    400,
    'invalid_request',
  ],
  [
    'an empty providerMethodId',
    (id) => ({ customerId: id, type: 'provider_a', providerMethodId: '  ' }),
    400,
    'invalid_request',
  ],
  [
    'a string isDefault',
    (id) => ({ customerId: id, type: 'provider_a', providerMethodId: 'x', isDefault: 'yes' }),
    400,
    'invalid_request',
  ],
  [
    'an unknown customer',
    () => ({ customerId: '00000000-0000-4000-8000-000000000000', type: 'provider_a', providerMethodId: 'x' }),
    400,
    'customer_not_found',
  ],
  [
    'the same method twice',
    (id) => ({ customerId: id, type: 'provider_a', providerMethodId: 'pm_existing', isDefault: true }),
    409,
    'duplicate_payment_method',
  ],
];
for (const [name, body, status, code] of refusals) {
  test.serial(`refused: ${name} -> ${status} ${code}, nothing changed`, async (t) => {
    const customer = await insertCustomer(app.db);
    await add({ customerId: customer.id, type: 'provider_a', providerMethodId: 'pm_existing', isDefault: true });
    const before = await app.db('payment_methods').orderBy('id');
    const res = await add(body(customer.id));
    t.is(res.status, status, res.text);
    t.is(res.body.error.code, code);
    t.deepEqual(await app.db('payment_methods').orderBy('id'), before);
  });
}

test('deleting a customer removes their stored methods', async (t) => {
  const customer = await insertCustomer(app.db);
  await add({ customerId: customer.id, type: 'provider_a', providerMethodId: 'pm_gone', isDefault: true });
  t.is((await request(app.baseUrl, `/api/customers/${customer.id}`, { method: 'DELETE', cookie })).status, 204);
  t.is((await app.db('payment_methods').where({ customer_id: customer.id })).length, 0);
});
