/**
 * C-8 "inputs have labels": on every page with forms, each label's `for` names exactly one element, a form
 * control of the label's own form; no id repeats; every visible control has a label. The product page (its
 * edit form, "New plan" and each plan's edit form share field names) and the invoice page (a refund form per
 * payment) are where ids once repeated.
 */
import test from 'ava';
import type { Page } from 'puppeteer';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createEndpoint } from '../../src/webhooks/service.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { adminApi, planHttp, productHttp } from '../subscriptions/fixtures.ts';
import { startConsoleKit, type ConsoleKit } from './fixtures.ts';
import { customer, invoiceFor, payManually } from './invoices-fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

/** What is wrong with the page's labels and ids, one line each (none when all is well). */
function labelProblems(page: Page): Promise<string[]> {
  // No named helpers inside: the test runner's transform would refer to a name-keeping helper the page lacks.
  return page.evaluate(() => {
    const problems: string[] = [];
    const ids = new Map<string, number>();
    for (const el of Array.from(document.querySelectorAll('[id]'))) ids.set(el.id, (ids.get(el.id) ?? 0) + 1);
    for (const [id, n] of ids) if (n > 1) problems.push(`id ${id} appears ${n} times`);
    for (const label of Array.from(document.querySelectorAll('label[for]'))) {
      const id = label.getAttribute('for')!;
      const targets = document.querySelectorAll(`[id="${CSS.escape(id)}"]`);
      if (targets.length !== 1) {
        problems.push(`label "${label.textContent}" for=${id} names ${targets.length} elements`);
        continue;
      }
      const target = targets[0]!;
      if (!['INPUT', 'SELECT', 'TEXTAREA'].includes(target.tagName))
        problems.push(`label "${label.textContent}" for=${id} names a ${target.tagName}`);
      if (label.closest('form') !== target.closest('form'))
        problems.push(`label "${label.textContent}" for=${id} names an input of another form`);
    }
    for (const control of Array.from(document.querySelectorAll<HTMLInputElement>('input, select, textarea'))) {
      if (control.type === 'hidden') continue;
      if (!control.labels || control.labels.length === 0)
        problems.push(
          `${control.tagName.toLowerCase()}[name=${control.name}] in form ` +
            `${control.form?.getAttribute('action') ?? '(none)'} has no label`,
        );
    }
    return problems;
  });
}

test(
  'every label names exactly one control of its own form, ' + 'and no id repeats, on every page with forms',
  async (t) => {
    const db = kit.app.db;
    const api = adminApi(kit.app, (await loginAsAdmin(kit.app.baseUrl, db)).cookie);
    const c = await customer(db, 'Label Check Ltd');
    const product = await productHttp(api, { name: 'Labelled', productType: 'licensed' });
    const monthly = await planHttp(api, { productId: product.id, name: 'Monthly' });
    await planHttp(api, { productId: product.id, name: 'Yearly', billingCycle: 'yearly', basePrice: '300.00' });
    const subscription = await api('/api/billing/subscriptions', {
      body: { customerId: c.id, planId: monthly.id, billingCycle: 'monthly' },
    });
    const license = await api('/api/licenses', {
      body: { customerId: c.id, productId: product.id, maxActivations: 2 },
    });
    const { endpoint } = await createEndpoint(
      db,
      { url: 'http://127.0.0.1:9/hooks/labels', events: ['*'] },
      kit.app.deps.config,
      SYSTEM_ACTOR,
    );
    const invoice = await invoiceFor(db, c.id, { unitPrice: '100.00' });
    await payManually(db, invoice.id, '30.00');
    await payManually(db, invoice.id, '20.00');

    const paths = [
      `/admin/products/${product.id}`,
      `/admin/invoices/${invoice.id}`,
      '/admin/invoices',
      '/admin/payments',
      '/admin/customers',
      `/admin/customers/${c.id}`,
      '/admin/products',
      '/admin/coupons',
      '/admin/subscriptions',
      `/admin/subscriptions/${subscription.body.id}`,
      '/admin/licenses',
      `/admin/licenses/${license.body.licenseKey}`,
      '/admin/webhooks',
      `/admin/webhooks/${endpoint.id}`,
      '/admin/provider-events',
      '/admin/lifecycle',
      '/admin/settings',
      '/admin/audit-log',
    ];
    const { page, close } = await kit.adminPage('/admin');
    for (const path of paths) {
      const res = await page.goto(`${kit.app.baseUrl}${path}`);
      t.is(res!.status(), 200, path);
      t.deepEqual(await labelProblems(page), [], path);
    }
    // The repeated forms are there: two plans' edit forms, two payments' refund forms.
    await page.goto(`${kit.app.baseUrl}/admin/products/${product.id}`);
    t.is((await page.$$('form[action*="/plans/"]')).length, 2);
    await page.goto(`${kit.app.baseUrl}/admin/invoices/${invoice.id}`);
    t.is((await page.$$('form[action$="/refunds"]')).length, 2);
    await close();
  },
);
