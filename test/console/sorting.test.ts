/**
 * C-15: list columns sort by `sort=` (`sort=dueDate`, `sort=-total`), headers toggle it keeping the filters, the
 * cursor pages follow the order, and an unknown key says so on the list instead of an error page.
 */
import test from 'ava';
import type { Page } from 'puppeteer';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { listInvoiceSummaries } from '../../src/invoices/service.ts';
import { formatMoney } from '../../src/money.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import { rowsOf, startConsoleKit, texts, type ConsoleKit } from './fixtures.ts';
import { customer, invoiceFor, payManually } from './invoices-fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;
const column = async (page: Page, index: number) => (await rowsOf(page, 'main')).map((cells) => cells[index]);
const params = (page: Page) => new URL(page.url()).searchParams;
const clickHeader = (page: Page, text: string) =>
  Promise.all([
    page.waitForNavigation(),
    page.evaluate((t) => {
      const link = Array.from(document.querySelectorAll<HTMLAnchorElement>('th a.sort')).find((a) =>
        a.textContent?.startsWith(t),
      );
      link!.click();
    }, text),
  ]);

test('invoices sort by total both ways from their headers, keeping the filters', async (t) => {
  const c = await customer(db(), 'Sorting Totals Ltd');
  for (const price of ['30.00', '5.00', '120.00', '7.50']) await invoiceFor(db(), c.id, { unitPrice: price });
  const { page, close } = await kit.adminPage(`/admin/invoices?customerId=${c.id}&status=issued&sort=-total`);
  t.deepEqual(await column(page, 3), ['120.00 USD', '30.00 USD', '7.50 USD', '5.00 USD']);
  t.is(await page.$eval('th[aria-sort]', (th) => th.getAttribute('aria-sort')), 'descending');
  await clickHeader(page, 'Total');
  t.is(params(page).get('sort'), 'total');
  t.is(params(page).get('customerId'), c.id, 'the filters are kept');
  t.is(params(page).get('status'), 'issued');
  t.deepEqual(await column(page, 3), ['5.00 USD', '7.50 USD', '30.00 USD', '120.00 USD']);
  await clickHeader(page, 'Total');
  t.is(params(page).get('sort'), '-total');
  // Filtering again keeps the order.
  await Promise.all([page.waitForNavigation(), page.click('form.filters button[type=submit]')]);
  t.is(params(page).get('sort'), '-total');
  t.deepEqual(await column(page, 3), ['120.00 USD', '30.00 USD', '7.50 USD', '5.00 USD']);
  await close();
});

test('an unknown sort key is a message on the list, in its usual order, with the filters kept', async (t) => {
  const c = await customer(db(), 'Sorting Unknown Ltd');
  await invoiceFor(db(), c.id, { unitPrice: '1.00' });
  await invoiceFor(db(), c.id, { unitPrice: '2.00' });
  const { page, close } = await kit.adminPage(`/admin/invoices?customerId=${c.id}&sort=colour`);
  t.deepEqual(await texts(page, 'h1'), ['Invoices']);
  t.deepEqual(await texts(page, 'main p.error[role=alert]'), [
    'This list cannot be sorted by “colour”. It is shown newest first; sort it by Number, Status, Total, ' +
      'Amount due, Due date, Created.',
  ]);
  t.deepEqual(await column(page, 3), ['2.00 USD', '1.00 USD'], 'newest first');
  t.is(await page.$eval('#filter-customer', (el) => (el as HTMLInputElement).value), c.id);
  for (const list of ['payments', 'customers', 'subscriptions']) {
    const response = await page.goto(`${kit.app.baseUrl}/admin/${list}?sort=-colour`);
    t.is(response?.status(), 200, list);
    t.regex((await texts(page, 'main p.error[role=alert]'))[0] ?? '', /cannot be sorted by “-colour”/, list);
  }
  await close();
});

test('a sorted list pages by its own keyset: every row once, in order, ties by creation', async (t) => {
  const c = await customer(db(), 'Sorting Pages Ltd');
  const prices = ['9.00', '3.00', '9.00', '1.00', '3.00', '9.00', '4.00'];
  for (const price of prices) await invoiceFor(db(), c.id, { unitPrice: price });
  for (const [sort, expected] of [
    [{ key: 'total', descending: false }, ['1.00', '3.00', '3.00', '4.00', '9.00', '9.00', '9.00']],
    [{ key: 'total', descending: true }, ['9.00', '9.00', '9.00', '4.00', '3.00', '3.00', '1.00']],
  ] as const) {
    const seen: { id: string; total: string }[] = [];
    let startingAfter: string | undefined;
    for (;;) {
      const { rows, hasMore } = await listInvoiceSummaries(
        db(),
        { limit: 2, startingAfter, sort },
        { customerId: c.id },
      );
      seen.push(...rows);
      if (!hasMore) break;
      startingAfter = rows.at(-1)!.id;
    }
    t.deepEqual(
      seen.map((r) => formatMoney(r.total, 'USD')),
      [...expected],
    );
    t.is(new Set(seen.map((r) => r.id)).size, prices.length, 'no row twice');
  }
});

test('the next page link keeps the order', async (t) => {
  const c = await customer(db(), 'Sorting Next Page Ltd');
  for (let i = 0; i < 51; i += 1) await invoiceFor(db(), c.id, { unitPrice: `${i + 1}.00` });
  const { page, close } = await kit.adminPage(`/admin/invoices?customerId=${c.id}&sort=total`);
  t.is((await column(page, 3))[0], '1.00 USD');
  await Promise.all([page.waitForNavigation(), page.click('a[rel=next]')]);
  t.is(params(page).get('sort'), 'total');
  t.deepEqual(await column(page, 3), ['51.00 USD']);
  await close();
});

test('payments sort by amount; customers by name; subscriptions by trial end', async (t) => {
  const c = await customer(db(), 'Sorting Payments Ltd');
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '100.00' });
  for (const amount of ['20.00', '5.00', '40.00']) await payManually(db(), invoice.id, amount);
  const { page, close } = await kit.adminPage(`/admin/payments?customerId=${c.id}&sort=-amount`);
  t.deepEqual(await column(page, 5), ['40.00 USD', '20.00 USD', '5.00 USD']);
  await clickHeader(page, 'Amount');
  t.deepEqual(await column(page, 5), ['5.00 USD', '20.00 USD', '40.00 USD']);
  t.is(params(page).get('customerId'), c.id);

  for (const name of ['zeta Sortname', 'Alpha Sortname', 'mid Sortname']) await insertCustomer(db(), { name });
  await page.goto(`${kit.app.baseUrl}/admin/customers?q=sortname&sort=name`);
  t.deepEqual(await column(page, 0), ['Alpha Sortname', 'mid Sortname', 'zeta Sortname']);
  await clickHeader(page, 'Name');
  t.is(params(page).get('q'), 'sortname');
  t.deepEqual(await column(page, 0), ['zeta Sortname', 'mid Sortname', 'Alpha Sortname']);

  const plan = await makePlan(db(), '10.00');
  const s = await customer(db(), 'Sorting Subscriptions Ltd');
  for (const trialDays of [20, undefined, 5]) {
    await createSubscription(
      db(),
      { customerId: s.id, planId: plan.id, billingCycle: plan.billing_cycle, trialDays },
      SYSTEM_ACTOR,
    );
  }
  await page.goto(`${kit.app.baseUrl}/admin/subscriptions?customerId=${s.id}&sort=trialEnd`);
  const trialEnds = await column(page, 5);
  t.is(trialEnds.length, 3);
  t.true(trialEnds[0]! < trialEnds[1]!, 'the nearer trial end first');
  t.is(trialEnds[2], '', 'no trial last');
  await close();
});
