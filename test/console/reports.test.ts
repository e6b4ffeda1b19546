/** C-16: the aging and revenue reports, in Chromium, and GET /api/reports/aging. */
import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createRefund } from '../../src/refunds/service.ts';
import { issueCreditNote } from '../../src/settlement/service.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { rowsOf, startConsoleKit, texts, type ConsoleKit } from './fixtures.ts';
import { customer, invoiceFor, pageText, payManually } from './invoices-fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;
const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY);

test.serial('C-16: aging buckets per currency, each a link to its invoices; the API answers the same', async (t) => {
  const c = await customer(db(), 'Aging Corp');
  // Due 14 days after creation (the default terms): created 40 days ago is 26 days past due.
  const current = await invoiceFor(db(), c.id, { unitPrice: '10.00', currency: 'CHF' });
  const late = await invoiceFor(db(), c.id, { unitPrice: '20.00', currency: 'CHF', at: daysAgo(40) });
  await invoiceFor(db(), c.id, { unitPrice: '30.00', currency: 'CHF', at: daysAgo(100) });
  await invoiceFor(db(), c.id, { unitPrice: '40.00', currency: 'CHF', at: daysAgo(200) });
  await payManually(db(), late.id, '5.00');
  const { page, close } = await kit.adminPage('/admin/reports/aging');
  t.deepEqual(await texts(page, 'h1'), ['Aging report']);
  t.deepEqual(await rowsOf(page, '#aging-CHF + .wide'), [
    ['Current (not yet due)', '1', '10.00 CHF'],
    ['1-30 days past due', '1', '15.00 CHF'],
    ['31-60 days past due', '0', '0.00 CHF'],
    ['61-90 days past due', '1', '30.00 CHF'],
    ['Over 90 days past due', '1', '40.00 CHF'],
    ['Total', '4', '95.00 CHF'],
  ]);
  await Promise.all([page.waitForNavigation(), page.click('a[href="/admin/invoices?aging=1-30&currency=CHF"]')]);
  t.deepEqual(await texts(page, 'tbody td:first-child'), [late.invoice_number]);
  await page.goto(`${kit.app.baseUrl}/admin/invoices?aging=current&currency=CHF`);
  t.deepEqual(await texts(page, 'tbody td:first-child'), [current.invoice_number]);

  const { cookie } = await loginAsAdmin(kit.app.baseUrl, db());
  const api = await request(kit.app.baseUrl, '/api/reports/aging', { cookie });
  t.is(api.status, 200);
  const chf = api.body.currencies.find((x: { currency: string }) => x.currency === 'CHF');
  t.like(chf, { currency: 'CHF', total: '95.00', count: 4 });
  t.deepEqual(
    chf.buckets.map((b: { bucket: string; amount: string }) => [b.bucket, b.amount]),
    [
      ['current', '10.00'],
      ['1-30', '15.00'],
      ['31-60', '0.00'],
      ['61-90', '30.00'],
      ['90+', '40.00'],
    ],
  );
  t.is((await request(kit.app.baseUrl, '/api/reports/aging')).status, 401);
  await close();
});

test.serial(
  'C-16: revenue per month: invoiced, collected, refunded, credit-noted, net; a CSV of the same',
  async (t) => {
    const c = await customer(db(), 'Revenue Corp');
    const invoice = await invoiceFor(db(), c.id, { unitPrice: '100.00', currency: 'SEK' });
    const payment = await payManually(db(), invoice.id, '80.00');
    await createRefund(db(), { paymentId: payment.id, amount: '10.00', reason: 'goodwill' }, SYSTEM_ACTOR, {
      config: kit.app.deps.config,
    });
    await issueCreditNote(db(), { invoiceId: invoice.id, amount: '5.00', reason: 'late' }, SYSTEM_ACTOR);
    const month = new Date().toISOString().slice(0, 7);
    const { page, close } = await kit.adminPage(`/admin/reports/revenue?from=${month}&to=${month}`);
    t.deepEqual(await texts(page, 'h1'), ['Revenue report']);
    t.deepEqual(await rowsOf(page, '#revenue-SEK + .wide'), [
      [month, '100.00 SEK', '80.00 SEK', '10.00 SEK', '5.00 SEK', '70.00 SEK', '0.00 SEK', '—'],
    ]);
    const csv = await page.evaluate(async (m) => {
      const res = await fetch(`/admin/reports/revenue/export.csv?from=${m}&to=${m}`);
      return { type: res.headers.get('content-type'), text: await res.text() };
    }, month);
    t.is(csv.type, 'text/csv; charset=utf-8');
    t.true(csv.text.includes(`${month},SEK,100.00,80.00,10.00,5.00,70.00,0.00,`));
    await page.goto(`${kit.app.baseUrl}/admin/reports/revenue?from=2026-05&to=2026-01`);
    t.regex(await pageText(page), /must not be after `to`/);
    await close();
  },
);
