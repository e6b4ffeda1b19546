/**
 * C-3: error pages (a filter the list does not understand, an unknown id or URL) are console pages with the navigation.
 */
import test from 'ava';
import { scrollsSideways } from '../helpers/browser.ts';
import { startConsoleKit, texts, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

const NAV = [
  'Overview',
  'Customers',
  'Invoices',
  'Payments',
  'Subscriptions',
  'Products',
  'Licenses',
  'Webhooks',
  'Settings',
  'Audit log',
];

test(
  'a bad filter is a 400 console page naming the filter, ' + 'why, the value given, and the list without filters',
  async (t) => {
    const { page, close } = await kit.adminPage('/admin', 360);
    const res = await page.goto(`${kit.app.baseUrl}/admin/invoices?customerId=Acme&status=issued`);
    t.is(res!.status(), 400);
    t.deepEqual(await texts(page, 'nav a'), NAV);
    t.is(await page.$eval('nav a[aria-current=page]', (a) => a.textContent), 'Invoices');
    t.deepEqual(await texts(page, 'h1'), ['The page was asked for with a filter it does not understand']);
    t.is(await page.title(), 'The page was asked for with a filter it does not understand · Billing console');
    t.deepEqual(await texts(page, 'main li'), ['customerId (given: "Acme"): must be a UUID']);
    const back = await page.$$eval('main a', (as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
    t.deepEqual(back[0], ['Show this list without filters', '/admin/invoices']);
    t.false(await scrollsSideways(page));
    await close();
  },
);

test('an unknown id or URL is a 404 console page with the navigation, a title and one h1', async (t) => {
  const { page, close } = await kit.adminPage('/admin');
  for (const [path, h1, section] of [
    ['/admin/customers/abc', 'Customer not found', 'Customers'],
    ['/admin/invoices/00000000-0000-4000-8000-000000000000', 'Invoice not found', 'Invoices'],
    ['/admin/no-such-page', 'No console page at /admin/no-such-page', undefined],
  ] as const) {
    const res = await page.goto(`${kit.app.baseUrl}${path}`);
    t.is(res!.status(), 404, path);
    t.deepEqual(await texts(page, 'nav a'), NAV, path);
    t.deepEqual(await texts(page, 'h1'), [h1], path);
    t.is(await page.title(), `${h1} · Billing console`, path);
    t.deepEqual(
      await page.$$eval('nav a[aria-current=page]', (as) => as.map((a) => a.textContent)),
      section ? [section] : [],
      path,
    );
  }
  await close();
});

test('without a session, an unknown console URL leads to the login page as every console URL does (C-1)', async (t) => {
  const res = await fetch(`${kit.app.baseUrl}/admin/no-such-page`, { redirect: 'manual' });
  t.is(res.status, 302);
  t.is(res.headers.get('location'), '/admin/login?next=%2Fadmin%2Fno-such-page');
});
