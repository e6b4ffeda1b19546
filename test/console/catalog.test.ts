/**
 * The catalog pages (console.md "operations"): products with plans and metrics, a product's page and its actions,
 * coupons.
 */
import test from 'ava';
import { refreshProductMetrics } from '../../src/products/metrics.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { adminApi, planHttp, productHttp, type Api } from '../subscriptions/fixtures.ts';
import { rowsOf, startConsoleKit, submit, texts, inputValue, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
let api: Api;
let cookie: string;
test.before(async () => {
  kit = await startConsoleKit();
  cookie = (await loginAsAdmin(kit.app.baseUrl, kit.app.db)).cookie;
  api = adminApi(kit.app, cookie);
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;
const count = async (table: string, where: Record<string, unknown> = {}) =>
  Number((await db()(table).where(where).count<{ n: string }[]>('* as n'))[0]!.n);
const productRow = (id: string) => db()('products').where({ id }).first();
const alertText = async (page: Parameters<typeof texts>[0]) => (await texts(page, '[role=alert]'))[0] ?? '';

// Serial: the first test needs the catalog empty, and the lists read what the others add.
test.serial('empty lists say so; the products page links the coupons', async (t) => {
  const { page, close } = await kit.adminPage('/admin/products');
  t.is(await page.title(), 'Products · Billing console');
  t.deepEqual(await texts(page, 'h1'), ['Products']);
  t.deepEqual(await texts(page, '.empty'), ['No products yet.']);
  t.is(await page.$eval('nav [aria-current=page]', (a) => a.textContent), 'Products');
  await Promise.all([page.waitForNavigation(), page.click('main a[href="/admin/coupons"]')]);
  t.is(await page.title(), 'Coupons · Billing console');
  t.deepEqual(await texts(page, 'h1'), ['Coupons']);
  t.deepEqual(await texts(page, '.empty'), ['No coupons yet.']);
  t.is(await page.$eval('nav [aria-current=page]', (a) => a.textContent), 'Products');
  await close();
});

test.serial('the list shows products newest first with their plans and metrics, 50 a page', async (t) => {
  const sync = await productHttp(api, { name: 'Sync', productType: 'saas', price: '1234.5' });
  await planHttp(api, { productId: sync.id, name: 'Team', basePrice: '99.00' });
  const yearly = await planHttp(api, {
    productId: sync.id,
    name: 'Team yearly',
    billingCycle: 'yearly',
    basePrice: '1200.00',
  });
  const customer = await insertCustomer(db());
  t.is(
    (
      await api('/api/billing/subscriptions', {
        body: { customerId: customer.id, planId: yearly.id, billingCycle: 'yearly' },
      })
    ).status,
    201,
  );
  t.is((await api(`/api/billing/plans/${yearly.id}`, { method: 'PUT', body: { active: false } })).status, 200);
  await refreshProductMetrics(db());
  const tool = await productHttp(api, { name: 'Tool', productType: 'licensed', price: '5' });

  const { page, close } = await kit.adminPage('/admin/products');
  t.deepEqual(await texts(page, 'thead th'), [
    'Name',
    'Type',
    'Status',
    'Price',
    'Plans',
    'Monthly revenue',
    'Active users',
    'Created',
  ]);
  const rows = await rowsOf(page, '');
  t.deepEqual(rows[0]!.slice(0, 7), ['Tool', 'licensed', 'active', '5.00 USD', 'none', '0.00 USD', '0']);
  t.deepEqual(rows[1]!.slice(0, 7), [
    'Sync',
    'saas',
    'active',
    '1,234.50 USD',
    'Team 99.00 USD / monthlyTeam yearly 1,200.00 USD / yearly (inactive)',
    '100.00 USD',
    '1',
  ]);
  t.is(await page.$eval('tbody tr:nth-child(2) a', (a) => a.getAttribute('href')), `/admin/products/${sync.id}`);
  t.truthy(tool.id);

  const base = Date.parse('2020-01-01T00:00:00Z');
  await db()('products').insert(
    Array.from({ length: 55 }, (_, i) => ({
      name: `Old ${i}`,
      product_type: 'api',
      price: '1',
      created_at: new Date(base + i * 1000),
    })),
  );
  await page.reload();
  t.is((await rowsOf(page, '')).length, 50);
  await Promise.all([page.waitForNavigation(), page.click('a[rel=next]')]);
  t.deepEqual(
    (await rowsOf(page, '')).map((r) => r[0]),
    ['Old 6', 'Old 5', 'Old 4', 'Old 3', 'Old 2', 'Old 1', 'Old 0'],
  );
  t.is(await page.$('a[rel=next]'), null);
  await close();
});

test.serial(
  'creating a product goes to its page; a refusal shows the service message, keeps what was typed and adds nothing',
  async (t) => {
    const { page, close } = await kit.adminPage('/admin/products');
    await submit(page, '/admin/products', {
      name: 'Form Product',
      productType: 'api',
      price: '19.90',
      currency: 'eur',
      description: 'Line 1\nLine 2',
    });
    const row = await db()('products').where({ name: 'Form Product' }).first();
    t.like(row, {
      product_type: 'api',
      price: '19.90',
      currency: 'EUR',
      description: 'Line 1\nLine 2',
      status: 'active',
    });
    t.is(new URL(page.url()).pathname, `/admin/products/${row.id}`);
    t.regex((await texts(page, '.notice'))[0] ?? '', /Product Form Product created/);
    t.deepEqual(await texts(page, 'h1'), ['Form Product']);

    const before = await count('products');
    await page.goto(`${kit.app.baseUrl}/admin/products`);
    await submit(page, '/admin/products', { name: 'Kept Name', price: '-5', description: 'kept text' });
    t.is(new URL(page.url()).pathname, '/admin/products');
    t.regex(await alertText(page), /price: must not be negative/);
    t.regex(await alertText(page), /invalid_request/);
    t.is(await inputValue(page, 'form[action="/admin/products"] [name=name]'), 'Kept Name');
    t.is(await inputValue(page, 'form[action="/admin/products"] [name=price]'), '-5');
    t.is(await inputValue(page, 'form[action="/admin/products"] [name=description]'), 'kept text');
    t.is(
      await page.$eval('form[action="/admin/products"] [name=price]', (el) => el.getAttribute('aria-invalid')),
      'true',
    );
    await submit(page, '/admin/products', { name: ' ', price: '5' });
    t.regex(await alertText(page), /name: must not be empty/);
    t.is(await count('products'), before);
    await close();
  },
);

test.serial(
  "a product's page shows its metrics, plans and audit entries; editing saves, a refusal changes nothing",
  async (t) => {
    const product = await productHttp(api, { name: 'Editable', price: '10', description: 'Old words' });
    const plan = await planHttp(api, { productId: product.id, name: 'Monthly', basePrice: '12.00' });
    await db()('products').where({ id: product.id }).update({ churn_rate: '0.125' });
    const { page, close } = await kit.adminPage(`/admin/products/${product.id}`);
    t.is(await page.title(), 'Editable · Billing console');
    t.deepEqual(await texts(page, 'h2'), ['Product', 'Plans', 'Audit log']);
    t.deepEqual(await texts(page, '.card .value'), ['0.00 USD', '0', '0', '12.50%']);
    t.deepEqual((await rowsOf(page, '#plans'))[0]!.slice(0, 3), ['Monthly', '12.00 USD / monthly', 'yes']);
    t.true(plan.id.length > 0);
    t.is((await rowsOf(page, 'section[aria-labelledby=audit-heading]'))[0]![2], 'product.create');

    const action = `/admin/products/${product.id}`;
    t.is(await inputValue(page, `form[action="${action}"] [name=price]`), '10');
    await submit(page, action, { name: 'Edited', description: '' });
    t.regex((await texts(page, '.notice'))[0] ?? '', /Product updated/);
    t.like(await productRow(product.id), { name: 'Edited', description: null, price: '10' });
    const audit = await rowsOf(page, 'section[aria-labelledby=audit-heading]');
    t.is(audit[0]![2], 'product.update');
    t.regex(audit[0]![3]!, /name: Editable → Edited/);

    const before = await productRow(product.id);
    await submit(page, action, { name: 'Typed', price: 'ten' });
    t.regex(await alertText(page), /price: /);
    t.is(await inputValue(page, `form[action="${action}"] [name=name]`), 'Typed');
    t.is(await inputValue(page, `form[action="${action}"] [name=price]`), 'ten');
    t.true(await page.$eval(`form[action="${action}"]`, (f) => f.closest('details')!.open));
    t.deepEqual(await productRow(product.id), before);
    await close();
  },
);

test.serial('archive and unarchive are buttons on the page; an unknown product is a 404 page', async (t) => {
  const product = await productHttp(api, { name: 'Archivable' });
  const { page, close } = await kit.adminPage(`/admin/products/${product.id}`);
  await submit(page, `/admin/products/${product.id}/archive`, {});
  t.regex((await texts(page, '.notice'))[0] ?? '', /Product Archivable archived/);
  t.is((await productRow(product.id)).status, 'archived');
  t.is(await page.$(`form[action="/admin/products/${product.id}/archive"]`), null);
  await submit(page, `/admin/products/${product.id}/unarchive`, {});
  t.regex((await texts(page, '.notice'))[0] ?? '', /Product Archivable unarchived/);
  t.is((await productRow(product.id)).status, 'active');
  await close();
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
    const res = await fetch(`${kit.app.baseUrl}/admin/products/${id}`, { headers: { cookie } });
    t.is(res.status, 404, id);
    t.regex(await res.text(), /Product not found/);
  }
});

test.serial('deleting a product in use is refused with the service message; an unused one is deleted', async (t) => {
  const used = await productHttp(api, { name: 'In Use' });
  await planHttp(api, { productId: used.id });
  const { page, close } = await kit.adminPage(`/admin/products/${used.id}`);
  await submit(page, `/admin/products/${used.id}/delete`, {});
  t.is(new URL(page.url()).pathname, `/admin/products/${used.id}/delete`);
  const alert = await alertText(page);
  t.regex(alert, /The product is used by plans, subscriptions or licenses; archive it instead/);
  t.regex(alert, /product_in_use/);
  t.truthy(await productRow(used.id));

  const unused = await productHttp(api, { name: 'Unused' });
  await page.goto(`${kit.app.baseUrl}/admin/products/${unused.id}`);
  await submit(page, `/admin/products/${unused.id}/delete`, {});
  t.is(new URL(page.url()).pathname, '/admin/products');
  t.regex((await texts(page, '.notice'))[0] ?? '', /Product Unused deleted/);
  t.is(await productRow(unused.id), undefined);
  await close();
});

test.serial(
  'a plan is created and edited on its product page; a refusal keeps what was typed and adds nothing',
  async (t) => {
    const product = await productHttp(api, { name: 'Planned', currency: 'EUR' });
    const { page, close } = await kit.adminPage(`/admin/products/${product.id}`);
    const action = `/admin/products/${product.id}/plans`;
    t.is(await inputValue(page, `form[action="${action}"] [name=currency]`), 'EUR');
    t.deepEqual(await texts(page, '#plans .empty'), ['No plans for this product yet.']);
    await submit(page, action, { name: 'Quarterly', billingCycle: 'quarterly', basePrice: '270.00' });
    t.regex((await texts(page, '.notice'))[0] ?? '', /Plan Quarterly created/);
    const plan = await db()('plans').where({ product_id: product.id }).first();
    t.like(plan, {
      name: 'Quarterly',
      billing_cycle: 'quarterly',
      base_price: '270.00',
      currency: 'EUR',
      pricing_model: 'flat',
      active: true,
    });
    t.deepEqual((await rowsOf(page, '#plans'))[0]!.slice(0, 3), ['Quarterly', '270.00 EUR / quarterly', 'yes']);

    await submit(page, action, { name: 'Bad', basePrice: '1.2.3' });
    t.regex(await alertText(page), /basePrice: /);
    t.is(await inputValue(page, `form[action="${action}"] [name=name]`), 'Bad');
    t.is(await inputValue(page, `form[action="${action}"] [name=basePrice]`), '1.2.3');
    t.is(await count('plans', { product_id: product.id }), 1);

    const edit = `/admin/products/${product.id}/plans/${plan.id}`;
    await submit(page, edit, { name: 'Quarterly (old)', active: 'false' });
    t.regex((await texts(page, '.notice'))[0] ?? '', /Plan Quarterly \(old\) saved/);
    t.like(await db()('plans').where({ id: plan.id }).first(), {
      name: 'Quarterly (old)',
      active: false,
      base_price: '270.00',
    });
    await submit(page, edit, { name: '' });
    t.regex(await alertText(page), /name: must not be empty/);
    t.is(await inputValue(page, `form[action="${edit}"] [name=name]`), '');
    t.true(await page.$eval(`form[action="${edit}"]`, (f) => f.closest('details')!.open));
    t.is((await db()('plans').where({ id: plan.id }).first()).name, 'Quarterly (old)');
    await close();
  },
);

test.serial(
  'coupons are listed newest first and created; both percentOff and amountOff is refused with the service message',
  async (t) => {
    const { page, close } = await kit.adminPage('/admin/coupons');
    await submit(page, '/admin/coupons', {
      code: 'SPRING25',
      percentOff: '25',
      duration: 'repeating',
      durationInCycles: '3',
      maxRedemptions: '100',
    });
    t.regex((await texts(page, '.notice'))[0] ?? '', /Coupon SPRING25 created/);
    await submit(page, '/admin/coupons', {
      code: 'TENOFF',
      amountOff: '10',
      currency: 'usd',
      duration: 'once',
      expiresAt: '2030-01-01',
    });
    t.deepEqual(await texts(page, 'thead th'), ['Code', 'Discount', 'Duration', 'Redeemed', 'Expires', 'Created']);
    const rows = await rowsOf(page, '');
    t.deepEqual(rows[0]!.slice(0, 5), ['TENOFF', '10.00 USD off', 'once', '0 / ∞', '2030-01-01 00:00 UTC']);
    t.deepEqual(rows[1]!.slice(0, 5), ['SPRING25', '25% off', '3 cycles', '0 / 100', 'never']);

    const before = await count('coupons');
    await submit(page, '/admin/coupons', {
      code: 'BOTH',
      percentOff: '10',
      amountOff: '5',
      currency: 'USD',
      duration: 'forever',
    });
    t.regex(await alertText(page), /percentOff: give exactly one of percentOff or amountOff/);
    t.is(await inputValue(page, 'form[action="/admin/coupons"] [name=code]'), 'BOTH');
    t.is(await inputValue(page, 'form[action="/admin/coupons"] [name=amountOff]'), '5');
    t.is(await inputValue(page, 'form[action="/admin/coupons"] [name=duration]'), 'forever');
    await submit(page, '/admin/coupons', {
      code: 'spring25',
      percentOff: '10',
      amountOff: '',
      currency: '',
      duration: 'once',
    });
    t.regex(await alertText(page), /A coupon with code spring25 exists/);
    t.regex(await alertText(page), /coupon_code_taken/);
    t.is(await count('coupons'), before);
    await close();
  },
);

test.serial('a product named like markup shows as text and opens no dialog', async (t) => {
  const name = '<img src=x onerror=alert(1)>';
  const product = await productHttp(api, { name, description: '<script>alert(2)</script>' });
  await planHttp(api, { productId: product.id, name: '<b>plan</b>' });
  for (const path of ['/admin/products', `/admin/products/${product.id}`]) {
    const { page, dialogs, close } = await kit.adminPage(path);
    t.is(await page.$('main img'), null, path);
    t.is(await page.$('main b'), null, path);
    t.true((await page.$$eval('main a, main h1', (els) => els.map((e) => e.textContent))).includes(name), path);
    t.deepEqual(dialogs, [], path);
    await close();
  }
});

test.serial('the pages read at 360 px without sideways scrolling, with one h1, forms open or closed', async (t) => {
  const product = await productHttp(api, {
    name: 'A product name long enough to wrap over several lines on a phone',
    price: '98765.43',
  });
  await planHttp(api, { productId: product.id, name: 'A plan whose name is also rather long', basePrice: '12345.67' });
  for (const path of ['/admin/products', `/admin/products/${product.id}`, '/admin/coupons']) {
    const { page, close } = await kit.adminPage(path, 360);
    t.is((await page.$$('h1')).length, 1, path);
    t.false(await scrollsSideways(page), path);
    await page.$$eval('details', (ds) => {
      for (const d of ds) d.setAttribute('open', '');
    });
    t.false(await scrollsSideways(page), `${path} with its forms open`);
    await close();
  }
});

test.serial('the forms refuse a post without the CSRF token and change nothing', async (t) => {
  const product = await productHttp(api, { name: 'Guarded' });
  const before = { products: await count('products'), plans: await count('plans'), coupons: await count('coupons') };
  for (const path of [
    '/admin/products',
    `/admin/products/${product.id}`,
    `/admin/products/${product.id}/archive`,
    `/admin/products/${product.id}/delete`,
    `/admin/products/${product.id}/plans`,
    '/admin/coupons',
  ]) {
    const res = await request(kit.app.baseUrl, path, {
      method: 'POST',
      cookie,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: 'name=Forged&code=FORGED&percentOff=5&duration=once&basePrice=1&price=1',
    });
    t.is(res.status, 403, path);
  }
  t.deepEqual(
    { products: await count('products'), plans: await count('plans'), coupons: await count('coupons') },
    before,
  );
  t.like(await productRow(product.id), { name: 'Guarded', status: 'active' });
});
