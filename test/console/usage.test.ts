/**
 * Usage on the console (issue 35): the metrics pages with their refusals, charges on the plan form and the product
 * page, current usage on the subscription page with its CSV export, the tiers under an invoice's usage line. Each
 * page is also opened at 1280 and 360 px, and saved as docs/screenshots/usage-*.png with USAGE_SCREENSHOTS=1.
 */
import path from 'node:path';
import test from 'ava';
import { renewSubscription } from '../../src/subscriptions/renew.ts';
import { ingestEvents } from '../../src/usage-api/ingest.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { adminApi, invoicesOf, type Api } from '../subscriptions/fixtures.ts';
import { DAY, makeMetric, makeUsagePlan, subscribe, txId } from '../usage/fixtures.ts';
import { startConsoleKit, submit, texts, type ConsoleKit } from './fixtures.ts';

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
const shots = path.resolve(import.meta.dirname, '../../docs/screenshots');
const alertText = async (page: Parameters<typeof texts>[0]) => (await texts(page, '[role=alert]'))[0] ?? '';

/**
 * Saves `url` at 1280 and 360 px as docs/screenshots/<name>.png and <name>-360.png when USAGE_SCREENSHOTS=1 (so a
 * test run leaves the tree as it was); the pages are opened at both widths either way.
 */
async function screenshot(url: string, name: string) {
  for (const width of [1280, 360]) {
    if (process.env.USAGE_SCREENSHOTS !== '1') {
      const { close } = await kit.adminPage(url, width);
      await close();
      continue;
    }
    const { page, close } = await kit.adminPage(url, width);
    await page.screenshot({ path: path.join(shots, `${name}${width === 360 ? '-360' : ''}.png`), fullPage: true });
    await close();
  }
}

test.serial(
  'metrics: create, edit, and a delete or an aggregation change refused while a charge uses it',
  async (t) => {
    const { page, close } = await kit.adminPage('/admin/metrics');
    t.deepEqual(await texts(page, 'h1'), ['Billable metrics']);
    await submit(page, '/admin/metrics', { code: 'Bad Code', name: 'X', aggregation: 'count' });
    t.regex(await alertText(page), /code/);
    await submit(page, '/admin/metrics', { code: 'storage_gb', name: 'Storage', aggregation: 'max', field: 'gb' });
    t.regex((await texts(page, '.notice'))[0] ?? '', /Metric storage_gb created/);
    const metric = await db()('billable_metrics').where({ code: 'storage_gb' }).first();
    t.is(new URL(page.url()).pathname, `/admin/metrics/${metric.id}`);
    await makeUsagePlan(db(), [{ metricId: metric.id, model: 'per_unit', unitPrice: '0.25' }]);
    await submit(page, `/admin/metrics/${metric.id}`, { aggregation: 'sum' });
    t.regex(await alertText(page), /metric_in_use/);
    t.is((await db()('billable_metrics').where({ id: metric.id }).first()).aggregation, 'max');
    await page.goto(`${kit.app.baseUrl}/admin/metrics/${metric.id}`);
    await submit(page, `/admin/metrics/${metric.id}/delete`, {});
    t.regex(await alertText(page), /metric_in_use/);
    t.truthy(await db()('billable_metrics').where({ id: metric.id }).first());
    await screenshot(`/admin/metrics/${metric.id}`, 'usage-metric');
    await page.goto(`${kit.app.baseUrl}/admin/metrics/${metric.id}`);
    await submit(page, `/admin/metrics/${metric.id}`, { name: 'Storage (GB)' });
    t.regex((await texts(page, '.notice'))[0] ?? '', /Metric updated/);
    const unused = await makeMetric(db());
    await page.goto(`${kit.app.baseUrl}/admin/metrics/${unused.id}`);
    await submit(page, `/admin/metrics/${unused.id}/delete`, {});
    t.is(new URL(page.url()).pathname, '/admin/metrics');
    t.is(await db()('billable_metrics').where({ id: unused.id }).first(), undefined);
    await close();
    await screenshot('/admin/metrics', 'usage-metrics');
  },
);

test.serial('the plan form takes charges; the product page lists them', async (t) => {
  const metric = await makeMetric(db());
  const product = (await api('/api/products', { body: { name: 'Search API', productType: 'api', price: '0' } })).body;
  const { page, close } = await kit.adminPage(`/admin/products/${product.id}`);
  const action = `/admin/products/${product.id}/plans`;
  await submit(page, action, {
    name: 'Search (usage)',
    pricingModel: 'usage',
    basePrice: '0',
    currency: 'USD',
    'charges[0][metric]': metric.code,
    'charges[0][model]': 'graduated',
    'charges[0][tiers]': '1000 0\n100000 0.0015\ninf 0.001 5.00',
  });
  t.regex((await texts(page, '.notice'))[0] ?? '', /Plan Search \(usage\) created/, await alertText(page));
  const charges = await texts(page, '#plans ul.charges li');
  t.deepEqual(charges, [`${metric.code}: graduated (≤1000 at 0; ≤100000 at 0.0015; ∞ at 0.001 + 5.00)`]);
  await submit(page, action, {
    name: 'Broken',
    pricingModel: 'usage',
    basePrice: '0',
    currency: 'USD',
    'charges[0][metric]': metric.code,
    'charges[0][model]': 'per_unit',
  });
  t.regex(await alertText(page), /charges\.0\.unitPrice/);
  t.is(await db()('plans').where({ name: 'Broken' }).first(), undefined);
  await close();
  await screenshot(`/admin/products/${product.id}`, 'usage-product');
});

test.serial(
  'the subscription page shows the usage; its CSV export lists the events; the invoice shows tiers',
  async (t) => {
    const metric = await makeMetric(db());
    const plan = await makeUsagePlan(
      db(),
      [
        {
          metricId: metric.id,
          model: 'graduated',
          tiers: [
            { upTo: '10', unitPrice: '1' },
            { upTo: null, unitPrice: '0.5', flatFee: '2.00' },
          ],
        },
      ],
      '10.00',
    );
    const { customer, sub } = await subscribe(db(), plan.id, new Date(Date.now() - 40 * DAY));
    const events = Array.from({ length: 15 }, (_, i) => ({
      customerId: customer.id,
      transactionId: txId('csv'),
      metric: metric.code,
      timestamp: new Date(Date.now() - (30 - i / 10) * DAY),
    }));
    await ingestEvents(db(), events);
    const { page, close } = await kit.adminPage(`/admin/subscriptions/${sub.id}`);
    const usageRows = await page.$$eval('#usage tbody tr', (trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => (td.textContent ?? '').trim())),
    );
    t.is(usageRows.length, 1);
    t.is(usageRows[0]![2], '15');
    t.regex(usageRows[0]![3]!, /14\.50/);
    const csvUrl = await page.$eval('#usage a[href*="export.csv"]', (a) => a.getAttribute('href'));
    const csv = await (await fetch(`${kit.app.baseUrl}${csvUrl}`, { headers: { cookie } })).text();
    const lines = csv.trim().split('\r\n');
    t.is(lines[0], 'transaction_id,timestamp,metric,charge_id,value,properties,received_at');
    t.is(lines.length, 16);
    t.true(lines[1]!.startsWith(events[0]!.transactionId));
    await close();
    await screenshot(`/admin/subscriptions/${sub.id}`, 'usage-subscription');

    await renewSubscription(db(), sub.id, new Date());
    const invoice = (await invoicesOf(db(), sub.id))[1];
    const view = await kit.adminPage(`/admin/invoices/${invoice.id}`);
    const tiers = await texts(view.page, '.line-usage li');
    t.deepEqual(tiers, ['up to 10: 10 × 1 = 10', 'above: 5 × 0.5 + 2.00 USD = 4.5']);
    await view.close();
    await screenshot(`/admin/invoices/${invoice.id}`, 'usage-invoice');
  },
);
