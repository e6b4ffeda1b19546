/**
 * T-7 in Chromium: the Tax rates page (create, refuse, archive), rates chosen on the customer and plan forms, and an
 * invoice page with one row per rate and the reverse-charge note; at 1280 and 360 px without sideways scrolling.
 */
import test from 'ava';
import { loginAsAdmin } from '../helpers/auth.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { adminApi, planHttp, type Api } from '../subscriptions/fixtures.ts';
import { rowsOf, startConsoleKit, submit, texts, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
let api: Api;
test.before(async () => {
  kit = await startConsoleKit();
  const { cookie } = await loginAsAdmin(kit.app.baseUrl, kit.app.db);
  api = adminApi(kit.app, cookie);
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;

test.serial('the Tax rates page creates rates, refuses a bad one with the field named, and archives', async (t) => {
  const { page, close } = await kit.adminPage('/admin/products');
  await Promise.all([page.waitForNavigation(), page.click('main a[href="/admin/tax-rates"]')]);
  t.deepEqual(await texts(page, 'h1'), ['Tax rates']);
  await submit(page, '/admin/tax-rates', { name: 'VAT DE', percentage: '19', country: 'DE' });
  t.regex((await texts(page, '.notice'))[0] ?? '', /Tax rate VAT DE created/);
  await submit(page, '/admin/tax-rates', { name: 'VAT FR', percentage: '20', inclusive: 'true' });
  const before = Number((await db()('tax_rates').count({ n: '*' }))[0]!.n);
  await submit(page, '/admin/tax-rates', { name: 'Broken', percentage: '120' });
  t.regex((await texts(page, '.field-error')).join(' '), /from 0 to 100/);
  t.is(Number((await db()('tax_rates').count({ n: '*' }))[0]!.n), before);
  const rows = await rowsOf(page, '');
  t.deepEqual(rows[0]!.slice(0, 6), ['VAT FR', '20%', 'include tax', '—', '—', 'Active']);
  t.deepEqual(rows[1]!.slice(0, 6), ['VAT DE', '19%', 'exclude tax', 'DE', '—', 'Active']);
  const fr = await db()('tax_rates').where({ name: 'VAT FR' }).first();
  await Promise.all([page.waitForNavigation(), page.click(`form[action="/admin/tax-rates/${fr.id}/archive"] button`)]);
  t.regex((await texts(page, '.notice'))[0] ?? '', /VAT FR archived/);
  t.is((await rowsOf(page, ''))[0]![5], 'Archived');
  t.false(await scrollsSideways(page));
  await page.screenshot({ path: 'docs/screenshots/tax-rates-1280.png', fullPage: true });
  await close();
  const narrow = await kit.adminPage('/admin/tax-rates', 360);
  t.false(await scrollsSideways(narrow.page));
  await narrow.page.screenshot({ path: 'docs/screenshots/tax-rates-360.png', fullPage: true });
  await narrow.close();
});

test.serial('a customer gets rates and a reverse-charge status on its form; its invoice shows them', async (t) => {
  const vat = await db()('tax_rates').where({ name: 'VAT DE' }).first();
  const { page, close } = await kit.adminPage('/admin/customers');
  await page.$eval('form[action="/admin/customers"]', (f) => f.closest('details')?.setAttribute('open', ''));
  // Archived rates are not offered for a new choice.
  const offered = await texts(page, 'form[action="/admin/customers"] fieldset.choices label');
  t.deepEqual(offered, ['VAT DE 19%']);
  await page.click(`form[action="/admin/customers"] input[value="${vat.id}"]`);
  await submit(page, '/admin/customers', {
    name: 'Lyon Software SARL',
    email: 'billing@lyon.example',
    taxExempt: 'reverse',
    taxId: '',
  });
  t.regex((await texts(page, '.field-error')).join(' '), /required when taxExempt is reverse/);
  await submit(page, '/admin/customers', { taxId: 'FR40303265045' });
  const customer = await db()('customers').where({ email: 'billing@lyon.example' }).first();
  t.like(customer, { tax_exempt: 'reverse', tax_id: 'FR40303265045' });
  t.deepEqual(customer.tax_rate_ids, [vat.id]);
  t.true((await texts(page, '#profile dd')).includes('VAT DE 19%'));

  const reverse = await api('/api/billing/invoices', {
    body: { customerId: customer.id, lineItems: [{ description: 'Licence', quantity: 1, unitPrice: '500.00' }] },
  });
  const taxed = await api('/api/billing/invoices', {
    body: {
      customerId: (await api('/api/customers', { body: { name: 'Berlin GmbH', email: 'b@berlin.example' } })).body.id,
      taxRateIds: [vat.id],
      lineItems: [{ description: 'Licence', quantity: 1, unitPrice: '100.00' }],
    },
  });
  await page.goto(`${kit.app.baseUrl}/admin/invoices/${taxed.body.id}`);
  const amounts = await texts(page, 'dl.amounts dt');
  t.true(amounts.includes('VAT DE 19% on 100.00'), amounts.join(' | '));
  const figures = await texts(page, 'dl.amounts dd');
  t.true(
    figures.some((f) => /^19\.00\b/.test(f)),
    figures.join(' | '),
  );
  await page.screenshot({ path: 'docs/screenshots/invoice-taxes-1280.png', fullPage: true });
  await page.goto(`${kit.app.baseUrl}/admin/invoices/${reverse.body.id}`);
  t.deepEqual(await texts(page, '.tax-note'), [
    'Reverse charge: VAT to be accounted for by the recipient. Customer tax ID: FR40303265045',
  ]);
  await page.screenshot({ path: 'docs/screenshots/invoice-reverse-charge-1280.png', fullPage: true });
  await close();
});

test.serial('a plan takes its rates on the product page, and they can be changed on its edit form', async (t) => {
  const vat = await db()('tax_rates').where({ name: 'VAT DE' }).first();
  const plan = await planHttp(api, { basePrice: '10.00' });
  const url = `/admin/products/${plan.productId}`;
  const { page, close } = await kit.adminPage(url);
  const form = `form[action="${url}/plans/${plan.id}"]`;
  await page.$eval(form, (f) => f.closest('details')?.setAttribute('open', ''));
  await page.click(`${form} input[value="${vat.id}"]`);
  await Promise.all([page.waitForNavigation(), page.click(`${form} button[type=submit]`)]);
  t.deepEqual((await db()('plans').where({ id: plan.id }).first()).tax_rate_ids, [vat.id]);
  await page.$eval(form, (f) => f.closest('details')?.setAttribute('open', ''));
  await page.click(`${form} input[value="${vat.id}"]`);
  await Promise.all([page.waitForNavigation(), page.click(`${form} button[type=submit]`)]);
  t.deepEqual((await db()('plans').where({ id: plan.id }).first()).tax_rate_ids, []);
  await close();
});
