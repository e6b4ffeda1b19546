/**
 * P-3..P-6 in Chromium at 1280 and 360 px, by URL, field name and link text: the navigation, Overview, Invoices (PDF
 * and Pay to the hosted page), Subscriptions (Cancel at period end, Keep subscription, Change plan with the preview
 * and Confirm change, usage when the plan has charges), Licenses (Deactivate, Download license file) and Billing
 * details; every action audited with the actor `customer`; no horizontal scroll at 360 px; a screenshot of each page.
 */
import test from 'ava';
import type { Page } from 'puppeteer';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import { request } from '../helpers/http.ts';
import { makeMetric, makeUsagePlan, txId } from '../usage/fixtures.ts';
import {
  bodyText,
  fitsWidth,
  makePortalCustomer,
  portalCookie,
  portalCsrf,
  portalPage,
  postForm,
  startPortalWorld,
  type PortalWorld,
} from './fixtures.ts';

let w: PortalWorld;
test.before(async () => {
  w = await startPortalWorld();
});
test.after.always(async () => w?.close());

const texts = (page: Page, selector: string) =>
  page.$$eval(selector, (els) => els.map((e) => (e.textContent ?? '').trim()));

async function look(t: { true(v: boolean, m?: string): void }, page: Page, name: string, width: number) {
  t.true(await fitsWidth(page), `${name} at ${width} px scrolls sideways`);
  await page.screenshot({ path: `docs/screenshots/portal-${name}-${width}.png`, fullPage: true });
}

async function click(page: Page, text: string) {
  const [button] = await page.$$(`xpath/.//button[normalize-space()='${text}']`);
  if (!button) throw new Error(`no button ${text}`);
  await Promise.all([page.waitForNavigation(), button.click()]);
}

const auditActors = async (action: string, targetId: string) =>
  (await w.app.db('audit_log').where({ action, target_id: targetId })).map((r) => r.actor);

for (const width of [1280, 360]) {
  test(`at ${width} px: navigation, Overview and Invoices with PDF and Pay`, async (t) => {
    const world = await makePortalCustomer(w, `Overview ${width}`);
    const other = await makePortalCustomer(w, 'Someone Else');
    const { page, close } = await portalPage(w, world.customer.id, width, 'https://app.example.com/account');
    t.teardown(close);
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.reload();
    t.true(requests.length >= 3, 'the page and its two stylesheets');
    t.true(
      requests.every((url) => new URL(url).origin === w.app.baseUrl),
      `K-2: nothing from another host: ${requests.join(' ')}`,
    );
    t.deepEqual(await texts(page, 'nav a'), ['Overview', 'Invoices', 'Subscriptions', 'Licenses', 'Billing details']);
    t.deepEqual(await texts(page, 'a[href="https://app.example.com/account"]'), ['Back to app.example.com']);
    const overview = await bodyText(page);
    for (const expected of ['Acme Software', 'Amount due', '155.00 USD', 'Basic', 'Next invoice'])
      t.true(overview.includes(expected), expected);
    t.false(overview.includes('Someone Else'));
    const periodEnd = world.sub.current_period_end.toISOString().slice(0, 10);
    t.true((await page.$eval('#next-invoice-date', (e) => e.textContent ?? '')).includes(periodEnd));
    await look(t, page, 'overview', width);

    await Promise.all([page.waitForNavigation(), page.click('nav a[href="/portal/invoices"]')]);
    t.is(new URL(page.url()).pathname, '/portal/invoices');
    const numbers = await texts(page, 'tbody td:first-child');
    t.true(numbers.some((n) => n.includes(world.invoice.invoiceNumber)));
    t.false(
      numbers.some((n) => n.includes(other.invoice.invoiceNumber)),
      "another customer's invoice",
    );
    const statuses = await texts(page, 'tbody td:nth-child(3)');
    t.true(statuses.length > 0 && statuses.every((s) => s.includes('Issued')), `the API's status: ${statuses}`);
    const hosted = world.invoice.hostedUrl; // K-1: the link every answer gives, under PUBLIC_BASE_URL
    t.deepEqual(
      (await page.$$eval('tbody a', (as) => as.map((a) => [a.textContent, a.getAttribute('href')]))).slice(0, 2),
      [
        ['PDF', `${hosted}/pdf`],
        ['Pay', hosted],
      ],
    );
    await look(t, page, 'invoices', width);
  });

  test(`at ${width} px: Cancel at period end, Keep subscription, Change plan, Confirm change`, async (t) => {
    const world = await makePortalCustomer(w, `Subscriber ${width}`);
    const { page, close } = await portalPage(w, world.customer.id, width);
    t.teardown(close);
    await page.goto(`${w.app.baseUrl}/portal/subscriptions`);
    await look(t, page, 'subscriptions', width);
    await Promise.all([page.waitForNavigation(), page.click(`a[href="/portal/subscriptions/${world.sub.id}"]`)]);
    await click(page, 'Cancel at period end');
    t.true((await bodyText(page)).includes('Your subscription will end on'));
    t.true((await w.app.db('subscriptions').where({ id: world.sub.id }).first()).cancel_at_period_end);
    await look(t, page, 'subscription', width);
    await click(page, 'Keep subscription');
    t.false((await w.app.db('subscriptions').where({ id: world.sub.id }).first()).cancel_at_period_end);
    const actor = `customer:${world.customer.id}`;
    t.deepEqual(await auditActors('subscription.cancel_at_period_end', world.sub.id), [actor, actor]);
    t.truthy(
      await w.app
        .db('events')
        .where({ type: 'subscription.updated' })
        .whereRaw("data->>'id' = ?", [world.sub.id])
        .first(),
    );

    t.deepEqual(
      await page.$$eval('select[name=newPlanId] option', (os) => os.map((o) => o.textContent)),
      ['Pro · 60.00 USD / monthly'],
      'only active plans of the same product, cycle and currency',
    );
    await Promise.all([page.waitForNavigation(), page.click('xpath/.//button[normalize-space()="Change plan"]')]);
    t.is(new URL(page.url()).pathname, `/portal/subscriptions/${world.sub.id}/change-plan`);
    const credit = await page.$eval('#credit', (e) => e.getAttribute('data-amount'));
    const charge = await page.$eval('#charge', (e) => e.getAttribute('data-amount'));
    t.regex(credit!, /^\d+(\.\d+)?$/);
    t.regex(charge!, /^\d+(\.\d+)?$/);
    t.true(Number(charge) > 0, 'an upgrade charges the difference');
    await look(t, page, 'change-plan', width);
    await click(page, 'Confirm change');
    t.true((await bodyText(page)).includes('Your plan is changed.'));
    t.is((await w.app.db('subscriptions').where({ id: world.sub.id }).first()).plan_id, world.pro.id);
    t.deepEqual(await auditActors('subscription.change_plan', world.sub.id), [actor]);
  });

  test(`at ${width} px: a license: key, status, expiry, features, limit; Deactivate frees the seat`, async (t) => {
    const world = await makePortalCustomer(w, `Licensee ${width}`);
    const { page, close } = await portalPage(w, world.customer.id, width);
    t.teardown(close);
    await page.goto(`${w.app.baseUrl}/portal/licenses`);
    await look(t, page, 'licenses', width);
    await Promise.all([page.waitForNavigation(), page.click(`a[href="/portal/licenses/${world.license.id}"]`)]);
    const text = await bodyText(page);
    for (const expected of [world.license.licenseKey, 'Active', 'Never', 'export', '2 of 3', 'Device laptop-1'])
      t.true(text.includes(expected), expected);
    t.is((await texts(page, 'button')).filter((b) => b === 'Download license file').length, 2);
    await look(t, page, 'license', width);
    const [deactivate] = await page.$$('xpath/.//button[normalize-space()="Deactivate"]');
    await Promise.all([page.waitForNavigation(), deactivate!.click()]);
    t.true((await bodyText(page)).includes('is deactivated; its seat is free'));
    const license = await w.app.db('licenses').where({ id: world.license.id }).first();
    t.is(license.current_activations, 1);
    t.deepEqual(await auditActors('license.device_remove', world.license.licenseKey), [
      `customer:${world.customer.id}`,
    ]);
  });

  test(`at ${width} px: Billing details: name, company, billingAddress, taxId; refusals beside fields`, async (t) => {
    const world = await makePortalCustomer(w, `Payer ${width}`);
    const { page, close } = await portalPage(w, world.customer.id, width);
    t.teardown(close);
    await page.goto(`${w.app.baseUrl}/portal/billing`);
    for (const name of ['name', 'company', 'billingAddress', 'taxId']) t.truthy(await page.$(`[name=${name}]`), name);
    await page.$eval('input[name=name]', (i) => {
      (i as HTMLInputElement).value = '';
      (i as HTMLInputElement).required = false;
    });
    await page.type('input[name=company]', 'Buyer GmbH');
    await click(page, 'Save');
    t.true((await bodyText(page)).includes('must not be empty'));
    t.is(await page.$eval('input[name=name]', (i) => i.getAttribute('aria-invalid')), 'true');
    t.is(await page.$eval('input[name=company]', (i) => (i as HTMLInputElement).value), 'Buyer GmbH', 'kept');
    t.is((await w.app.db('customers').where({ id: world.customer.id }).first()).name, `Payer ${width}`);
    await look(t, page, 'billing-refused', width);
    await page.type('input[name=name]', 'Dana Buyer');
    await page.type('textarea[name=billingAddress]', '1 Main Street\nSpringfield');
    await page.type('input[name=taxId]', 'DE123456789');
    await click(page, 'Save');
    t.true((await bodyText(page)).includes('Your billing details are saved.'));
    const saved = await w.app.db('customers').where({ id: world.customer.id }).first();
    t.deepEqual(
      [saved.name, saved.company, saved.billing_address, saved.tax_id],
      ['Dana Buyer', 'Buyer GmbH', '1 Main Street\nSpringfield', 'DE123456789'],
    );
    t.deepEqual(await auditActors('customer.update', world.customer.id), [`customer:${world.customer.id}`]);
    await look(t, page, 'billing', width);
  });
}

test('at 360 px an unbroken name wraps; a paused subscription does not renew', async (t) => {
  const world = await makePortalCustomer(w, 'Long Names');
  await w.app
    .db('plans')
    .where({ id: world.basic.id })
    .update({ name: `Plan${'X'.repeat(134)}` });
  await w.app.db('subscriptions').where({ id: world.sub.id }).update({ status: 'paused' });
  const { page, close } = await portalPage(w, world.customer.id, 360);
  t.teardown(close);
  for (const path of ['/portal', '/portal/subscriptions', `/portal/subscriptions/${world.sub.id}`]) {
    await page.goto(`${w.app.baseUrl}${path}`);
    t.true(await fitsWidth(page), `${path} scrolls sideways`);
  }
  t.true((await bodyText(page)).includes('Not while paused'));
});

test('Confirm change with a prorationDate that is no instant is refused (400) and changes nothing', async (t) => {
  const world = await makePortalCustomer(w, 'Forged Preview');
  const cookie = await portalCookie(w, world.customer.id);
  const csrf = await portalCsrf(w, cookie);
  const res = await postForm(w, `/portal/subscriptions/${world.sub.id}/change-plan`, cookie, {
    _csrf: csrf,
    newPlanId: world.pro.id,
    prorationDate: 'garbage',
  });
  t.is(res.status, 400);
  t.true((await res.text()).includes('The preview has expired: choose the plan again'));
  const sub = await w.app.db('subscriptions').where({ id: world.sub.id }).first();
  t.is(sub.plan_id, world.basic.id);
});

test('Download license file answers the signed offline file for the device, audited as the customer', async (t) => {
  const world = await makePortalCustomer(w, 'File Taker');
  const cookie = await portalCookie(w, world.customer.id);
  const csrf = await portalCsrf(w, cookie);
  const res = await postForm(w, `/portal/licenses/${world.license.id}/license-file`, cookie, {
    _csrf: csrf,
    deviceId: 'laptop-1',
  });
  t.is(res.status, 200);
  t.regex(res.headers.get('content-disposition')!, /^attachment; filename=".+-laptop-1\.lic"$/);
  const file = await res.text();
  t.true(file.startsWith('-----BEGIN LICENSE FILE-----'));
  const audit = await w.app.db('audit_log').where({ action: 'license.checkout', target_id: world.license.licenseKey });
  t.deepEqual(
    audit.map((a) => a.actor),
    [`customer:${world.customer.id}`],
  );
  t.true(JSON.stringify(audit[0].after).includes('laptop-1'));
  const unknown = await postForm(w, `/portal/licenses/${world.license.id}/license-file`, cookie, {
    _csrf: csrf,
    deviceId: 'not-activated',
  });
  t.is(unknown.status, 404);
});

test("a usage plan's subscription page shows this period's usage (U-9)", async (t) => {
  const metric = await makeMetric(w.app.db);
  const plan = await makeUsagePlan(w.app.db, [{ metricId: metric.id, model: 'per_unit', unitPrice: '0.25' }]);
  const world = await makePortalCustomer(w, 'Metered');
  const sub = await createSubscription(
    w.app.db,
    { customerId: world.customer.id, planId: plan.id, billingCycle: 'monthly' },
    SYSTEM_ACTOR,
  );
  const events = [1, 2, 3, 4].map(() => ({ transactionId: txId(), metric: metric.code, subscriptionId: sub.id }));
  const sent = await request(w.app.baseUrl, '/api/billing/usage/events', {
    cookie: w.c.cookie,
    body: { events: events.map((e) => ({ ...e, customerId: world.customer.id })) },
  });
  t.true(sent.status < 300, sent.text);
  for (const width of [1280, 360]) {
    const { page, close } = await portalPage(w, world.customer.id, width);
    await page.goto(`${w.app.baseUrl}/portal/subscriptions/${sub.id}`);
    const usage = await page.$eval('#usage', (e) => e.textContent ?? '');
    t.true(usage.includes(metric.code));
    t.true(usage.includes('1.00 USD'), usage);
    await look(t, page, 'subscription-usage', width);
    await close();
  }
  const flat = await portalPage(w, world.customer.id, 1280);
  await flat.page.goto(`${w.app.baseUrl}/portal/subscriptions/${world.sub.id}`);
  t.is(await flat.page.$('#usage'), null, 'a plan without charges shows no usage');
  await flat.close();
});
