/**
 * C-8, C-11: audit entries read at 360 px (each entry stacks, its changes get the screen's width, not ~50 px),
 * on an object's page and on /admin/audit-log; on the log, a plan's entries name the plan and link its product.
 */
import test from 'ava';
import type { Page } from 'puppeteer';
import { loginAsAdmin } from '../helpers/auth.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { request } from '../helpers/http.ts';
import { adminApi, planHttp, productHttp, type Api } from '../subscriptions/fixtures.ts';
import { rowsOf, startConsoleKit, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
let cookie: string;
let api: Api;
let customerId: string;
test.before(async () => {
  kit = await startConsoleKit();
  cookie = (await loginAsAdmin(kit.app.baseUrl, kit.app.db)).cookie;
  api = adminApi(kit.app, cookie);
  const created = await request(kit.app.baseUrl, '/api/customers', {
    cookie,
    body: { name: 'Narrow Screen Ltd', email: 'narrow@example.test' },
  });
  customerId = created.body.id;
  const changed = {
    name: 'Narrow Screen Holdings International',
    company: 'Narrow Screen Holdings',
    billingAddress: '1 Long Street, Springfield, 12345',
    taxId: 'DE123456789',
  };
  await request(kit.app.baseUrl, `/api/customers/${customerId}`, { cookie, method: 'PUT', body: changed });
});
test.after.always(async () => kit?.close());

/** The narrowest list of changed fields among the entries within `scope`, and the page's content width. */
function changesWidth(page: Page, scope: string) {
  return page.$$eval(`${scope} ul.changes`, (lists) => ({
    narrowest: Math.min(...lists.map((l) => l.getBoundingClientRect().width)),
    content: document.querySelector('main')!.clientWidth,
    count: lists.length,
  }));
}

test("a customer's audit entries at 360 px: each entry stacks and its changes take the width", async (t) => {
  const { page, close } = await kit.adminPage(`/admin/customers/${customerId}`, 360);
  const widths = await changesWidth(page, 'section[aria-labelledby=audit-heading]');
  t.true(widths.count >= 2);
  t.true(widths.narrowest >= widths.content * 0.75, JSON.stringify(widths));
  t.false(await scrollsSideways(page));
  // Each cell says which column it is, the column heads being out of sight.
  const first = await page.$$eval('section[aria-labelledby=audit-heading] tbody tr:first-child td', (tds) =>
    tds.map((td) => td.getAttribute('data-label')),
  );
  t.deepEqual(first, ['When', 'Who', 'Action', 'Changes']);
  await close();
});

test('at 1280 px the entries stay a table with its column heads', async (t) => {
  const { page, close } = await kit.adminPage(`/admin/customers/${customerId}`);
  const shape = await page.$eval('section[aria-labelledby=audit-heading] table', (table) => ({
    cell: getComputedStyle(table.querySelector('td')!).display,
    head: (table.querySelector('thead') as HTMLElement).getBoundingClientRect().height > 10,
  }));
  t.deepEqual(shape, { cell: 'table-cell', head: true });
  await close();
});

test('/admin/audit-log at 360 px: entries stack, the changes take the width, nothing scrolls sideways', async (t) => {
  const { page, close } = await kit.adminPage(`/admin/audit-log?targetType=customer&targetId=${customerId}`, 360);
  const widths = await changesWidth(page, 'main');
  t.true(widths.count >= 2);
  t.true(widths.narrowest >= widths.content * 0.75, JSON.stringify(widths));
  t.false(await scrollsSideways(page));
  t.true(
    await page.$eval('.table-wrap', (w) => w.scrollWidth <= w.clientWidth + 1),
    'the entries do not scroll inside their frame either',
  );
  await close();
});

test("/admin/audit-log names a plan's entries by the plan and links them to its product's page", async (t) => {
  const product = await productHttp(api, { name: 'Audited product' });
  const plan = await planHttp(api, { productId: product.id, name: 'Audited plan' });
  const { page, close } = await kit.adminPage(`/admin/audit-log?targetType=plan&targetId=${plan.id}`);
  t.deepEqual(
    (await rowsOf(page, '')).map((r) => r[3]),
    ['plan Audited plan'],
  );
  t.is(
    await page.$eval('tbody td:nth-child(4) a', (a) => a.getAttribute('href')),
    `/admin/products/${product.id}#plans`,
  );
  await close();
});
