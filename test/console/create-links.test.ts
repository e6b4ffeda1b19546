/**
 * The ids the create forms ask for are shown (a customer's and a product's, copyable), and a customer's page
 * links each create form open and started for that customer (`?customerId=&create=1`, validated as any input).
 */
import test from 'ava';
import { loginAsAdmin } from '../helpers/auth.ts';
import { adminApi, planHttp, productHttp, type Api } from '../subscriptions/fixtures.ts';
import { startConsoleKit, texts, type ConsoleKit } from './fixtures.ts';
import { customer, fieldValue, pageText } from './invoices-fixtures.ts';

let kit: ConsoleKit;
let api: Api;
test.before(async () => {
  kit = await startConsoleKit();
  api = adminApi(kit.app, (await loginAsAdmin(kit.app.baseUrl, kit.app.db)).cookie);
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;

test("a customer's page and a product's page show their id in a <code>", async (t) => {
  const c = await customer(db(), 'Shown Id Ltd');
  const product = await productHttp(api, { name: 'Shown product' });
  const { page, close } = await kit.adminPage(`/admin/customers/${c.id}`, 360);
  t.true((await texts(page, '#profile dd code')).includes(c.id));
  await page.goto(`${kit.app.baseUrl}/admin/products/${product.id}`);
  t.true((await texts(page, '#product dd code')).includes(product.id));
  await close();
});

test(
  '"New invoice", "New subscription", "New license" and "New API key" open their create form started for the ' +
    'customer',
  async (t) => {
    const c = await customer(db(), 'Linked Forms Ltd');
    const plan = await planHttp(api, { name: 'Linked plan' });
    const licensed = await productHttp(api, { name: 'Linked app', productType: 'licensed' });
    const { page, close } = await kit.adminPage(`/admin/customers/${c.id}`);
    const cases = [
      ['New invoice', '/admin/invoices', 'create-invoice'],
      ['New subscription', '/admin/subscriptions', 'create-subscription'],
      ['New license', '/admin/licenses', 'create-license'],
      ['New API key', '/admin/settings', 'api-key-create'],
    ] as const;
    for (const [text, path, formId] of cases) {
      await page.goto(`${kit.app.baseUrl}/admin/customers/${c.id}`);
      const href = await page.$$eval(
        'main a',
        (as, text) => as.find((a) => a.textContent === text)?.getAttribute('href'),
        text,
      );
      t.is(href, `${path}?customerId=${c.id}&create=1#${formId}`, text);
      await Promise.all([
        page.waitForNavigation(),
        page.$$eval(
          'main a',
          (as, text) => (as.find((a) => a.textContent === text) as HTMLAnchorElement).click(),
          text,
        ),
      ]);
      t.true(await page.$eval(`#${formId}`, (d) => (d as HTMLDetailsElement).open), text);
      t.is(await fieldValue(page, path === '/admin/settings' ? '/admin/api-keys' : path, 'customerId'), c.id, text);
    }

    // Each form so started creates for the customer.
    await page.goto(`${kit.app.baseUrl}/admin/invoices?customerId=${c.id}&create=1`);
    await page.type('form[action="/admin/invoices"] [name="lineItems[0][description]"]', 'Set-up');
    await page.type('form[action="/admin/invoices"] [name="lineItems[0][unitPrice]"]', '99.00');
    await Promise.all([
      page.waitForNavigation(),
      page.click('form[action="/admin/invoices"] button[type=submit]:not([name])'),
    ]);
    t.is((await db()('invoices').where({ customer_id: c.id })).length, 1);

    await page.goto(`${kit.app.baseUrl}/admin/subscriptions?customerId=${c.id}&create=1`);
    await page.select('form[action="/admin/subscriptions"] [name=planId]', plan.id);
    await Promise.all([
      page.waitForNavigation(),
      page.click('form[action="/admin/subscriptions"] button[type=submit]'),
    ]);
    t.is((await db()('subscriptions').where({ customer_id: c.id })).length, 1);

    await page.goto(`${kit.app.baseUrl}/admin/licenses?customerId=${c.id}&create=1`);
    await page.type('form[action="/admin/licenses"] [name=productId]', licensed.id);
    await Promise.all([page.waitForNavigation(), page.click('form[action="/admin/licenses"] button[type=submit]')]);
    t.is((await db()('licenses').where({ customer_id: c.id })).length, 1);
    await close();
  },
);

test('the query that starts a form is validated as any input: a bad customerId or create is a 400 page', async (t) => {
  const { page, close } = await kit.adminPage('/admin');
  for (const query of ['customerId=Acme&create=1', 'customerId=00000000-0000-4000-8000-000000000000&create=yes']) {
    for (const path of ['/admin/invoices', '/admin/subscriptions', '/admin/licenses', '/admin/settings']) {
      const res = await page.goto(`${kit.app.baseUrl}${path}?${query}`);
      t.is(res!.status(), 400, `${path}?${query}`);
      t.regex(await pageText(page), /filter it does not understand/);
    }
  }
  // Without create, the list is only filtered and its form stays folded.
  await page.goto(`${kit.app.baseUrl}/admin/invoices?customerId=00000000-0000-4000-8000-000000000000`);
  t.false(await page.$eval('#create-invoice', (d) => (d as HTMLDetailsElement).open));
  await close();
});
