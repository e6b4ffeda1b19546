import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';

// D-90: unknown and read-only fields are refused with one detail each, and nothing changes.

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const count = async (table: string) => Number((await app.db(table).count({ n: '*' }).first())!.n);

test.serial('an unknown and a read-only field of a create are each named, and nothing is created', async (t) => {
  const before = await count('customers');
  const res = await request(app.baseUrl, '/api/customers', {
    cookie,
    body: { name: 'Ada', email: 'ada@example.test', monthlyRevenue: '10.00', nickname: 'A', creditBalance: '5.00' },
  });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'invalid_request');
  t.deepEqual(res.body.error.details.map((d: { path: string }) => d.path).sort(), [
    'creditBalance',
    'monthlyRevenue',
    'nickname',
  ]);
  t.true(res.body.error.details.every((d: { message: string }) => d.message === 'unknown field'));
  t.is(await count('customers'), before);
});

test.serial('read-only id, createdAt and updatedAt are refused on a PUT, which changes nothing', async (t) => {
  const customer = await insertCustomer(app.db, { name: 'Before' });
  const res = await request(app.baseUrl, `/api/customers/${customer.id}`, {
    method: 'PUT',
    cookie,
    body: {
      name: 'After',
      id: customer.id,
      createdAt: '2020-01-01T00:00:00.000Z',
      updatedAt: '2020-01-01T00:00:00.000Z',
    },
  });
  t.is(res.status, 400);
  t.deepEqual(res.body.error.details.map((d: { path: string }) => d.path).sort(), ['createdAt', 'id', 'updatedAt']);
  t.is((await app.db('customers').where({ id: customer.id }).first()).name, 'Before');
});

test.serial('an unknown field inside a nested object is named by its full path', async (t) => {
  const customer = await insertCustomer(app.db);
  const before = await count('invoices');
  const res = await request(app.baseUrl, '/api/billing/invoices', {
    cookie,
    body: {
      customerId: customer.id,
      lineItems: [
        { description: 'Seat', quantity: 1, unitPrice: '10.00' },
        { description: 'Seat', quantity: 1, unitPrice: '10.00', foo: 1, amount: '10.00' },
      ],
    },
  });
  t.is(res.status, 400);
  t.deepEqual(res.body.error.details.map((d: { path: string; message: string }) => [d.path, d.message]).sort(), [
    ['lineItems.1.amount', 'unknown field'],
    ['lineItems.1.foo', 'unknown field'],
  ]);
  t.is(await count('invoices'), before);
});

test.serial('unknown fields are listed beside the other problems of the same body', async (t) => {
  const res = await request(app.baseUrl, '/api/customers', {
    cookie,
    body: { name: 'Ada', email: 'not-an-email', extra: true },
  });
  t.is(res.status, 400);
  const paths = res.body.error.details.map((d: { path: string }) => d.path);
  t.true(paths.includes('extra'));
  t.true(paths.includes('email'));
});

test.serial('an unknown query parameter is refused and named with its place', async (t) => {
  const res = await request(app.baseUrl, '/api/customers?limit=10&sort=name', { cookie });
  t.is(res.status, 400);
  t.deepEqual(res.body.error.details, [{ path: 'query.sort', message: 'unknown field' }]);
  t.is((await request(app.baseUrl, '/api/customers?limit=10', { cookie })).status, 200);
});

test.serial('a body with only known fields is still accepted', async (t) => {
  const res = await request(app.baseUrl, '/api/customers', {
    cookie,
    body: { name: 'Grace', email: 'grace@example.test', company: null },
  });
  t.is(res.status, 201);
});

test.serial('a "__proto__" parameter is an unknown field like any other', async (t) => {
  const res = await request(app.baseUrl, '/api/customers?__proto__=x', { cookie });
  t.is(res.status, 400);
  t.deepEqual(res.body.error.details, [{ path: 'query.__proto__', message: 'unknown field' }]);
  const body = await request(app.baseUrl, '/api/customers', {
    cookie,
    rawBody: '{"name":"P","email":"p@example.test","__proto__":{"x":1}}',
    headers: { 'content-type': 'application/json' },
  });
  t.is(body.status, 400);
  t.deepEqual(body.body.error.details, [{ path: '__proto__', message: 'unknown field' }]);
});

test.serial('a route that takes no query refuses one, naming each parameter, and changes nothing', async (t) => {
  const customer = await insertCustomer(app.db, { name: 'Kept' });
  const put = await request(app.baseUrl, `/api/customers/${customer.id}?force=true`, {
    method: 'PUT',
    cookie,
    body: { name: 'Changed' },
  });
  t.is(put.status, 400);
  t.deepEqual(put.body.error.details, [{ path: 'query.force', message: 'unknown field' }]);
  t.is((await app.db('customers').where({ id: customer.id }).first()).name, 'Kept');
  const before = await count('customers');
  const post = await request(app.baseUrl, '/api/customers?dryRun=1', {
    cookie,
    body: { name: 'Q', email: 'q@example.test' },
  });
  t.is(post.status, 400);
  t.is(await count('customers'), before);
  t.is((await request(app.baseUrl, `/api/customers/${customer.id}?expand=products`, { cookie })).status, 400);
  t.is((await request(app.baseUrl, `/api/customers/${customer.id}`, { cookie })).status, 200);
});

test.serial(
  'money with spaces around it, a currency no country uses and an impossible date are refused, nothing created',
  async (t) => {
    const customer = await insertCustomer(app.db);
    const before = await count('invoices');
    const invoice = (fields: Record<string, unknown>) =>
      request(app.baseUrl, '/api/billing/invoices', {
        cookie,
        body: {
          customerId: customer.id,
          lineItems: [{ description: 'Seat', quantity: 1, unitPrice: '10.00' }],
          ...fields,
        },
      });
    const spaced = await request(app.baseUrl, '/api/billing/invoices', {
      cookie,
      body: { customerId: customer.id, lineItems: [{ description: 'Seat', quantity: 1, unitPrice: ' 10.00' }] },
    });
    t.is(spaced.status, 400);
    t.deepEqual(
      spaced.body.error.details.map((d: { path: string }) => d.path),
      ['lineItems.0.unitPrice'],
    );
    for (const currency of ['ABC', 'XXX', 'XTS', 'XAU', 'USD ']) {
      const res = await invoice({ currency });
      t.is(res.status, 400, currency);
      t.deepEqual(
        res.body.error.details,
        [{ path: 'currency', message: 'must be a 3-letter ISO 4217 currency code' }],
        currency,
      );
    }
    for (const dueDate of ['2030-02-30', '2030-04-31', '2030-02-29T10:00:00Z', '2030-01-01T24:00:00Z']) {
      const res = await invoice({ dueDate });
      t.is(res.status, 400, dueDate);
      t.deepEqual(
        res.body.error.details.map((d: { path: string }) => d.path),
        ['dueDate'],
        dueDate,
      );
    }
    t.is(await count('invoices'), before);
    t.is((await invoice({ currency: 'eur', dueDate: '2028-02-29' })).status, 201);
  },
);

test.serial(
  'a route that takes no body refuses one with fields, naming each, and changes nothing; an empty object is no field',
  async (t) => {
    const endpoint = await request(app.baseUrl, '/api/billing/webhooks/endpoints', {
      cookie,
      body: { url: 'https://receiver.example.test/hook', events: ['*'] },
    });
    t.is(endpoint.status, 201);
    const secretBefore = (await app.db('webhook_endpoints').where({ id: endpoint.body.id }).first()).secret;
    const chosen = await request(app.baseUrl, `/api/billing/webhooks/endpoints/${endpoint.body.id}/rotate-secret`, {
      cookie,
      body: { secret: 'my-own-secret-0123456789' },
    });
    t.is(chosen.status, 400);
    t.deepEqual(chosen.body.error.details, [{ path: 'secret', message: 'unknown field' }]);
    t.is((await app.db('webhook_endpoints').where({ id: endpoint.body.id }).first()).secret, secretBefore);
    const keys = await count('license_signing_keys');
    const alg = await request(app.baseUrl, '/api/licenses/signing-keys/rotate', { cookie, body: { alg: 'RS256' } });
    t.is(alg.status, 400);
    t.is(await count('license_signing_keys'), keys);
    t.is(
      (
        await request(app.baseUrl, `/api/billing/webhooks/endpoints/${endpoint.body.id}/rotate-secret`, {
          cookie,
          body: {},
        })
      ).status,
      200,
    );
  },
);
