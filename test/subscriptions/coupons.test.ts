import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { money } from '../../src/money.ts';
import { renewSubscription } from '../../src/subscriptions/renew.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { invoicesOf, makePlan, newCustomer } from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

let n = 0;
async function coupon(body: Record<string, unknown>) {
  n += 1;
  const res = await request(app.baseUrl, '/api/billing/coupons', { cookie, body: { code: `C${n}X`, ...body } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body;
}

/** Totals of the first `periods` invoices of a subscription created with `code` on a 40.00 monthly plan. */
async function totalsWith(code: string, periods: number, price = '40.00') {
  const customer = await newCustomer(app.db);
  const plan = await makePlan(app.db, price);
  const sub = await createSubscription(
    app.db,
    { customerId: customer.id, planId: plan.id, billingCycle: 'monthly', couponCode: code },
    SYSTEM_ACTOR,
    { now: new Date('2025-01-01T00:00:00Z') },
  );
  await renewSubscription(app.db, sub.id, new Date(Date.UTC(2025, periods - 1, 1)));
  return (await invoicesOf(app.db, sub.id)).map((i) => money(i.total).toFixed(2));
}

test('percent once: only the first invoice is discounted, as a negative line', async (t) => {
  const c = await coupon({ percentOff: '25', duration: 'once' });
  t.deepEqual(await totalsWith(c.code, 3), ['30.00', '40.00', '40.00']);
  const [first] = await app
    .db('invoice_line_items')
    .join('invoices', 'invoices.id', 'invoice_line_items.invoice_id')
    .where('invoice_line_items.description', 'like', `Discount (${c.code})`)
    .select('unit_price');
  t.true(money(first.unit_price).eq('-10'));
});

test('repeating for 2 cycles: the first two invoices are discounted', async (t) => {
  const c = await coupon({ percentOff: '12.5', duration: 'repeating', durationInCycles: 2 });
  t.deepEqual(await totalsWith(c.code, 4), ['35.00', '35.00', '40.00', '40.00']);
});

test('forever: every invoice is discounted; an amount off is capped at the price', async (t) => {
  const c = await coupon({ amountOff: '15.00', currency: 'USD', duration: 'forever' });
  t.deepEqual(await totalsWith(c.code, 3), ['25.00', '25.00', '25.00']);
  const big = await coupon({ amountOff: '100.00', currency: 'USD', duration: 'once' });
  t.deepEqual(await totalsWith(big.code, 1), ['0.00']);
});

test('codes are case-insensitive; an amountOff coupon in another currency is invalid', async (t) => {
  const c = await coupon({ percentOff: '50', duration: 'once' });
  t.deepEqual(await totalsWith(c.code.toLowerCase(), 1), ['20.00']);
  const euro = await coupon({ amountOff: '5.00', currency: 'EUR', duration: 'once' });
  await t.throwsAsync(totalsWith(euro.code, 1), { message: /EUR/ });
});

test(
  'expired and exhausted codes are 400 invalid_coupon and create nothing; concurrent redemptions never pass ' +
    'maxRedemptions',
  async (t) => {
    // A coupon cannot be created expired: this one expires after its creation.
    const expired = await coupon({ percentOff: '10', duration: 'once', expiresAt: '2099-01-01' });
    await app
      .db('coupons')
      .where({ id: expired.id })
      .update({ expires_at: new Date('2020-01-01T00:00:00Z') });
    const limited = await coupon({ percentOff: '10', duration: 'once', maxRedemptions: 3 });
    const plan = await makePlan(app.db, '40.00');
    const customer = await newCustomer(app.db);
    const create = (code: string) =>
      request(app.baseUrl, '/api/billing/subscriptions', {
        cookie,
        body: { customerId: customer.id, planId: plan.id, billingCycle: 'monthly', couponCode: code },
      });
    const refused = await create(expired.code);
    t.is(refused.status, 400);
    t.is(refused.body.error.code, 'invalid_coupon');
    const answers = await Promise.all(Array.from({ length: 10 }, () => create(limited.code)));
    t.is(answers.filter((a) => a.status === 201).length, 3);
    t.true(answers.filter((a) => a.status !== 201).every((a) => a.body.error.code === 'invalid_coupon'));
    t.is(Number((await app.db('subscriptions').where({ customer_id: customer.id }).count('* as n').first())?.n), 3);
    t.is((await app.db('coupons').where({ id: limited.id }).first()).times_redeemed, 3);
  },
);

test('coupon validation and duplicate codes', async (t) => {
  const bad = [
    { code: 'B1', percentOff: '10', amountOff: '5.00', currency: 'USD', duration: 'once' },
    { code: 'B2', duration: 'once' },
    { code: 'B3', amountOff: '5.00', duration: 'once' },
    { code: 'B4', percentOff: '10', duration: 'repeating' },
    { code: 'B5', percentOff: '0', duration: 'once' },
    { code: 'B6', percentOff: '101', duration: 'once' },
    { code: 'B7', percentOff: 10, duration: 'once' },
    { code: 'B8', percentOff: '10', currency: 'USD', duration: 'once' },
    { code: 'B9', percentOff: '10', duration: 'once', expiresAt: '2020-01-01' },
  ];
  for (const body of bad)
    t.is((await request(app.baseUrl, '/api/billing/coupons', { cookie, body })).status, 400, JSON.stringify(body));
  const ok = await coupon({ percentOff: '10', duration: 'once' });
  const dup = await request(app.baseUrl, '/api/billing/coupons', {
    cookie,
    body: { code: ok.code.toLowerCase(), percentOff: '5', duration: 'once' },
  });
  t.is(dup.status, 409);
  t.is(dup.body.error.code, 'coupon_code_taken');
  const list = await request(app.baseUrl, '/api/billing/coupons', { cookie });
  t.true(list.body.some((c: { id: string }) => c.id === ok.id));
});
