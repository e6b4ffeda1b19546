/**
 * C-6 "a refused action shows the service's error message on the page": the page opens with a summary of the
 * refusal (an alert, before the h1, in the first screen at 360 px) linking to the refused form, which is open
 * with the error beside its fields and what was typed; the HTTP status is the error code's.
 */
import test from 'ava';
import type { HTTPResponse, Page } from 'puppeteer';
import { errorStatus } from '../../src/http/error-status.ts';
import { startConsoleKit, texts, type ConsoleKit } from './fixtures.ts';
import { customer, fieldValue, invoiceFor, payManually } from './invoices-fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;

/** Fills and submits the form posting to `action` as a person would: opens its <details>, types, clicks its button. */
async function post(page: Page, action: string, values: Record<string, string>): Promise<HTTPResponse> {
  const form = `form[action="${action}"]`;
  await page.$eval(form, (f) => f.closest('details')?.setAttribute('open', ''));
  for (const [name, value] of Object.entries(values)) {
    await page.$eval(`${form} [name="${name}"]`, (el) => ((el as HTMLInputElement).value = ''));
    await page.type(`${form} [name="${name}"]`, value);
  }
  const [res] = await Promise.all([page.waitForNavigation(), page.click(`${form} button[type=submit]`)]);
  return res!;
}

/** What the top of the page shows of a refusal, and where its link leads. */
function summaryOf(page: Page) {
  return page.evaluate(() => {
    const main = document.querySelector('main')!;
    const summary = main.querySelector('.error-summary');
    const link = summary?.querySelector('a[href^="#"]');
    const target = link ? document.querySelectorAll(link.getAttribute('href')!) : [];
    const h1 = main.querySelector('h1')!;
    return {
      role: summary?.getAttribute('role'),
      text: summary?.textContent?.replace(/\s+/g, ' ').trim() ?? '',
      beforeH1: Boolean(summary && summary.compareDocumentPosition(h1) & Node.DOCUMENT_POSITION_FOLLOWING),
      firstInMain: main.firstElementChild === summary,
      onFirstScreen: summary ? summary.getBoundingClientRect().bottom <= window.innerHeight : false,
      targets: target.length,
      targetForm: target[0]?.closest('form')?.getAttribute('action') ?? null,
      targetOpen: target[0]
        ? Boolean((target[0].closest('details') as HTMLDetailsElement | null)?.open ?? true)
        : false,
    };
  });
}

test(
  'a refused refund at 360 px: summary first, alert, linked to the open refund form with the error and the typed ' +
    'amount',
  async (t) => {
    const c = await customer(db());
    const invoice = await invoiceFor(db(), c.id, { unitPrice: '60.00' });
    const payment = await payManually(db(), invoice.id, '60.00');
    const { page, close } = await kit.adminPage(`/admin/invoices/${invoice.id}`, 360);
    const action = `/admin/payments/${payment.id}/refunds`;
    const res = await post(page, action, { amount: '60.01', reason: 'too much' });
    t.is(res.status(), errorStatus.amount_exceeds_refundable);
    const summary = await summaryOf(page);
    t.like(summary, {
      role: 'alert',
      firstInMain: true,
      beforeH1: true,
      onFirstScreen: true,
      targets: 1,
      targetForm: action,
      targetOpen: true,
    });
    t.regex(summary.text, /Not done: the action was refused/);
    t.regex(summary.text, /at most what is left to refund, 60\.00 USD.*amount_exceeds_refundable/);
    t.regex(await page.title(), /^Refused: Invoice /);
    t.regex((await texts(page, `form[action="${action}"] .error`))[0]!, /amount_exceeds_refundable/);
    t.is(await fieldValue(page, action, 'amount'), '60.01');
    t.is(await fieldValue(page, action, 'reason'), 'too much');
    // Following the link lands on the refused form's error.
    await page.click('.error-summary a');
    const shown = await page.$eval('#refused', (el) => {
      const r = el.getBoundingClientRect();
      return r.top > -1 && r.top < window.innerHeight && r.left > -1 && r.left < window.innerWidth;
    });
    t.true(shown, 'the refused form is on screen after following the link');
    t.is(Number((await db()('refunds').where({ payment_id: payment.id }).count<{ n: string }[]>('* as n'))[0]!.n), 0);
    await close();
  },
);

test('a refused payment: summary first, the field named is marked with its reason beside it', async (t) => {
  const c = await customer(db());
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '80.00' });
  const { page, close } = await kit.adminPage(`/admin/invoices/${invoice.id}`);
  const action = `/admin/invoices/${invoice.id}/payments`;
  const res = await post(page, action, { amount: 'ten', providerReference: 'wire-9' });
  t.is(res.status(), errorStatus.invalid_request);
  const summary = await summaryOf(page);
  t.like(summary, { role: 'alert', firstInMain: true, targets: 1, targetForm: action, targetOpen: true });
  t.regex(summary.text, /invalid_request/);
  t.regex(summary.text, /amount/);
  const amount = `form[action="${action}"] [name=amount]`;
  t.is(await page.$eval(amount, (el) => el.getAttribute('aria-invalid')), 'true');
  const reason = await page.$eval(
    amount,
    (el) => document.getElementById(el.getAttribute('aria-describedby')!)?.textContent ?? '',
  );
  t.truthy(reason);
  t.is(await fieldValue(page, action, 'amount'), 'ten');
  t.is(await fieldValue(page, action, 'providerReference'), 'wire-9');
  t.is(Number((await db()('payments').where({ invoice_id: invoice.id }).count<{ n: string }[]>('* as n'))[0]!.n), 0);
  await close();
});

test(
  'a refused store credit grant on a customer at 360 px: summary on the first screen, linked to the open grant ' +
    'form',
  async (t) => {
    const c = await customer(db(), 'Credit Refused Ltd');
    const { page, close } = await kit.adminPage(`/admin/customers/${c.id}`, 360);
    const action = `/admin/customers/${c.id}/credits`;
    const res = await post(page, action, { amount: '-5.00', description: 'Goodwill' });
    t.is(res.status(), errorStatus.invalid_request);
    const summary = await summaryOf(page);
    t.like(summary, {
      role: 'alert',
      firstInMain: true,
      beforeH1: true,
      onFirstScreen: true,
      targets: 1,
      targetForm: action,
      targetOpen: true,
    });
    t.regex(summary.text, /amount/);
    t.is(await fieldValue(page, action, 'amount'), '-5.00');
    t.is(await fieldValue(page, action, 'description'), 'Goodwill');
    t.is(Number((await db()('credit_ledger').where({ customer_id: c.id }).count<{ n: string }[]>('* as n'))[0]!.n), 0);
    await close();
  },
);

test('a page shown without a refusal has no summary; a successful action shows its confirmation instead', async (t) => {
  const c = await customer(db());
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '10.00' });
  const { page, close } = await kit.adminPage(`/admin/invoices/${invoice.id}`);
  t.is(await page.$('.error-summary'), null);
  await post(page, `/admin/invoices/${invoice.id}/payments`, { amount: '10.00' });
  t.is(await page.$('.error-summary'), null);
  t.deepEqual(await texts(page, '.notice'), ['Payment of 10.00 USD recorded.']);
  await close();
});
