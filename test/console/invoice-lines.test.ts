/**
 * Creating an invoice with more lines than the form first shows, without JavaScript (C-8): "Add a line"
 * posts the form, which comes back with what was typed and one more row, creating nothing; up to the API's limit.
 */
import test from 'ava';
import type { Page } from 'puppeteer';
import { MAX_LINE_ITEMS } from '../../src/invoices/schema.ts';
import { startConsoleKit, type ConsoleKit } from './fixtures.ts';
import { customer, fieldValue } from './invoices-fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

const FORM = 'form[action="/admin/invoices"][method=post]';

async function type(page: Page, name: string, value: string): Promise<void> {
  await page.type(`${FORM} [name="${name}"]`, value);
}

const line = (i: number) => ({
  description: `Line ${i + 1}`,
  quantity: String(i + 1),
  unitPrice: `${10 * (i + 1)}.00`,
});

async function typeLine(page: Page, i: number): Promise<void> {
  for (const [field, value] of Object.entries(line(i))) await type(page, `lineItems[${i}][${field}]`, value);
}

const rowCount = (page: Page) => page.$$eval(`${FORM} fieldset.line-row`, (rows) => rows.length);

test(
  '"Add a line" grows the form with what was typed kept and nothing created; ' + 'a 5-line invoice is created',
  async (t) => {
    const c = await customer(kit.app.db, 'Five Lines Ltd');
    const { page, close } = await kit.adminPage('/admin/invoices', 360);
    await page.$eval(FORM, (f) => f.closest('details')!.setAttribute('open', ''));
    await type(page, 'customerId', c.id);
    await page.select(`${FORM} [name=status]`, 'issued');
    t.is(await rowCount(page), 3);
    for (let i = 0; i < 3; i += 1) await typeLine(page, i);

    for (const rows of [4, 5]) {
      const [res] = await Promise.all([page.waitForNavigation(), page.click(`${FORM} button[name=_addLine]`)]);
      t.is(res!.status(), 200);
      t.is(await rowCount(page), rows);
      t.is(new URL(page.url()).hash, `#line-${rows}`);
      t.true(
        await page.$eval(`#line-${rows}`, (el) => {
          const r = el.getBoundingClientRect();
          return r.top > -1 && r.top < window.innerHeight;
        }),
        'the new row is on screen',
      );
      t.true(await page.$eval(FORM, (f) => (f.closest('details') as HTMLDetailsElement).open));
      t.is(await page.$('.error-summary'), null, 'growing the form is no refusal');
      t.is(await fieldValue(page, '/admin/invoices', 'customerId'), c.id);
      t.is(await fieldValue(page, '/admin/invoices', 'status'), 'issued');
      for (let i = 0; i < rows - 1; i += 1)
        t.is(await fieldValue(page, '/admin/invoices', `lineItems[${i}][description]`), `Line ${i + 1}`);
      t.is(await fieldValue(page, '/admin/invoices', `lineItems[${rows - 1}][description]`), '');
      t.is((await kit.app.db('invoices').where({ customer_id: c.id })).length, 0, 'nothing is created');
      await typeLine(page, rows - 1);
    }

    await Promise.all([page.waitForNavigation(), page.click(`${FORM} button[type=submit]:not([name])`)]);
    const invoice = await kit.app.db('invoices').where({ customer_id: c.id }).first();
    t.is(new URL(page.url()).pathname, `/admin/invoices/${invoice.id}`);
    t.is(invoice.status, 'issued');
    const lines = await kit.app.db('invoice_line_items').where({ invoice_id: invoice.id }).orderBy('position');
    t.deepEqual(
      lines.map((l) => [l.description, l.quantity, l.unit_price]),
      [0, 1, 2, 3, 4].map((i) => [`Line ${i + 1}`, i + 1, line(i).unitPrice]),
    );
    t.is(Number(invoice.total), 550);
    await close();
  },
);

test(
  'Enter in a field creates the invoice: ' + 'the submit button is the form default, "Add a line" comes after it',
  async (t) => {
    const { page, close } = await kit.adminPage('/admin/invoices');
    t.deepEqual(await page.$$eval(`${FORM} button`, (bs) => bs.map((b) => b.textContent)), [
      'Create invoice',
      'Add a line',
    ]);
    await close();
  },
);

test(`the form grows up to the API's limit (${MAX_LINE_ITEMS} lines), then offers no "Add a line"`, async (t) => {
  const { page, close } = await kit.adminPage('/admin/invoices');
  const answer = await page.evaluate(async (max) => {
    const body = new URLSearchParams({
      _csrf: (document.querySelector('input[name=_csrf]') as HTMLInputElement).value,
      _form: 'create-invoice',
      _addLine: '1',
    });
    for (let i = 0; i < max; i += 1) body.set(`lineItems[${i}][description]`, `Row ${i}`);
    const res = await fetch('/admin/invoices', { method: 'POST', body });
    const html = await res.text();
    return {
      status: res.status,
      rows: html.match(/<fieldset class="line-row"/g)?.length,
      addLine: html.includes('name="_addLine"'),
      last: html.includes(`value="Row ${max - 1}"`),
    };
  }, MAX_LINE_ITEMS);
  t.deepEqual(answer, { status: 200, rows: MAX_LINE_ITEMS, addLine: false, last: true });
  await close();
});
