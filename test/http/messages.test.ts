import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { request } from '../helpers/http.ts';
import { adminCtx, makeInvoice, pay, snapshot, type Ctx } from '../payments/fixtures.ts';

// Issue 19: every refusal names the field with a message a person can act on, in one phrasing.

let app: TestApp;
let c: Ctx;
test.before(async () => {
  app = await startTestApp();
  c = await adminCtx(app);
});
test.after.always(async () => app?.close());

const details = (res: { body: { error: { details: { path: string; message: string }[] } } }) =>
  res.body.error.details.map((d) => [d.path, d.message]);

test('login without a password says "password is required"', async (t) => {
  const res = await request(app.baseUrl, '/api/auth/login', { body: { email: 'a@example.test' } });
  t.is(res.status, 400);
  t.deepEqual(details(res), [['password', 'is required']]);
  t.is(res.body.error.message, 'Some fields need correcting: password: is required');
});

test('a missing field is "is required" even where its schema words its other problems', async (t) => {
  const res = await request(app.baseUrl, '/api/customers', { cookie: c.cookie, body: {} });
  t.is(res.status, 400);
  t.deepEqual(details(res).sort(), [
    ['email', 'is required'],
    ['name', 'is required'],
  ]);
  const plan = await request(app.baseUrl, '/api/billing/plans', {
    cookie: c.cookie,
    body: { name: 'P', basePrice: '1.00', currency: 'USD', pricingModel: 'flat' },
  });
  t.deepEqual(details(plan).sort(), [
    ['billingCycle', 'is required'],
    ['productId', 'is required'],
  ]);
});

test('a field of the wrong type is told only its type, not the checks of the type it should be', async (t) => {
  // zod runs an array's length check on a string too ("must be at most 4 characters").
  const res = await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    cookie: c.cookie,
    body: { 'portal.features': 'cancel', 'emails.enabled_types': 'invoice.issued' },
  });
  t.is(res.status, 400);
  t.deepEqual(details(res).sort(), [
    ['emails.enabled_types', 'must be an array'],
    ['portal.features', 'must be an array'],
  ]);
});

test.serial(
  'a negative or zero payment amount is 400 naming amount: "must be greater than 0", nothing changed',
  async (t) => {
    const invoice = await makeInvoice(c);
    const before = await snapshot(app.db);
    for (const amount of ['-5.00', '0']) {
      const res = await pay(c, { invoiceId: invoice.id, amount });
      t.is(res.status, 400);
      t.is(res.body.error.code, 'invalid_request');
      t.deepEqual(details(res), [['amount', 'must be greater than 0']]);
    }
    t.deepEqual(await snapshot(app.db), before);
  },
);

test("zod's own wording never reaches the caller", async (t) => {
  const answers = await Promise.all([
    request(app.baseUrl, '/api/customers?limit=0', { cookie: c.cookie }),
    request(app.baseUrl, '/api/customers?limit=abc', { cookie: c.cookie }),
    request(app.baseUrl, '/api/billing/coupons', {
      cookie: c.cookie,
      body: { code: 'C1', percentOff: '10', duration: 'repeating', durationInCycles: 'x' },
    }),
    request(app.baseUrl, '/api/auth/login', { body: { email: 5, password: ['x'] } }),
    request(app.baseUrl, '/api/customers', {
      cookie: c.cookie,
      body: { name: 'x'.repeat(201), email: 'a@example.test' },
    }),
  ]);
  t.deepEqual(answers.map(details), [
    [['query.limit', 'must be at least 1']],
    [['query.limit', 'must be a number']],
    [['durationInCycles', 'must be a number']],
    [
      ['email', 'must be a string'],
      ['password', 'must be a string'],
    ],
    [['name', 'must be at most 200 characters']],
  ]);
  for (const res of answers) t.notRegex(res.body.error.message, /expected|received|Invalid input/);
});
