import test from 'ava';
import type { Page } from 'puppeteer';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { money } from '../../src/money.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import { rowsOf, startConsoleKit, submit, texts, inputValue, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;
const subscribe = async (
  customerId: string,
  plan: { id: string; billing_cycle: 'monthly' | 'quarterly' | 'yearly' },
  extra: { trialDays?: number } = {},
) =>
  createSubscription(db(), { customerId, planId: plan.id, billingCycle: plan.billing_cycle, ...extra }, SYSTEM_ACTOR);
const subRow = (id: string) => db()('subscriptions').where({ id }).first();
const path = (page: Page) => new URL(page.url()).pathname;
const alertText = async (page: Page) => (await texts(page, '[role=alert]'))[0] ?? '';

// Serial: the first test needs no subscription at all, and the lists read what the others add.
test.serial('an empty list says so, with its title, one h1 and the create form', async (t) => {
  const { page, close } = await kit.adminPage('/admin/subscriptions');
  t.is(await page.title(), 'Subscriptions · Billing console');
  t.deepEqual(await texts(page, 'h1'), ['Subscriptions']);
  t.deepEqual(await texts(page, '.empty'), ['No subscriptions yet.']);
  t.truthy(await page.$('form[method=post][action="/admin/subscriptions"] [name=trialDays]'));
  await close();
});

test.serial(
  'creating one redirects to its page with a confirmation; a refusal shows the service message and keeps what was ' +
    'typed',
  async (t) => {
    const customer = await insertCustomer(db(), { name: 'Form Subscriber' });
    const plan = await makePlan(db(), '30.00');
    const { page, close } = await kit.adminPage('/admin/subscriptions');
    await submit(page, '/admin/subscriptions', {
      customerId: customer.id,
      planId: plan.id,
      trialDays: '14',
      couponCode: '',
    });
    const created = await db()('subscriptions').where({ customer_id: customer.id }).first();
    t.like(created, { plan_id: plan.id, status: 'trialing', billing_cycle: 'monthly' });
    t.is(path(page), `/admin/subscriptions/${created.id}`);
    t.regex(
      (await texts(page, '.notice'))[0] ?? '',
      /Subscription created \(trialing, trialing until \d{4}-\d{2}-\d{2}\)/,
    );

    await page.goto(`${kit.app.baseUrl}/admin/subscriptions`);
    await submit(page, '/admin/subscriptions', {
      customerId: customer.id,
      planId: plan.id,
      trialDays: '3',
      couponCode: 'NO-SUCH-CODE',
    });
    t.is(path(page), '/admin/subscriptions');
    t.regex(await alertText(page), /invalid_coupon/);
    t.is(await inputValue(page, 'form[action="/admin/subscriptions"] [name=couponCode]'), 'NO-SUCH-CODE');
    t.is(await inputValue(page, 'form[action="/admin/subscriptions"] [name=trialDays]'), '3');
    await submit(page, '/admin/subscriptions', {
      customerId: '00000000-0000-4000-8000-000000000000',
      planId: plan.id,
      trialDays: '',
      couponCode: '',
    });
    t.regex(await alertText(page), /customer_not_found/);
    await submit(page, '/admin/subscriptions', {
      customerId: customer.id,
      planId: plan.id,
      trialDays: '1000',
      couponCode: '',
    });
    t.regex(await alertText(page), /trialDays: must be an integer from 0 to 730/);
    t.is(
      Number((await db()('subscriptions').where({ customer_id: customer.id }).count<{ n: string }[]>('* as n'))[0]!.n),
      1,
    );
    await close();
  },
);

test.serial(
  'the list shows each subscription newest first; filters are query parameters that survive paging',
  async (t) => {
    const customer = await insertCustomer(db(), { name: '<img src=x onerror=alert(1)>' });
    const [monthly, yearly] = [await makePlan(db(), '12.00'), await makePlan(db(), '99.00', 'yearly')];
    const start = new Date('2026-01-01T00:00:00Z');
    const row = (i: number, status: string) => ({
      customer_id: customer.id,
      plan_id: monthly.id,
      status,
      billing_cycle: 'monthly',
      billing_anchor: start,
      period_number: 0,
      current_period_start: start,
      current_period_end: new Date('2026-02-01T00:00:00Z'),
      created_at: new Date(start.getTime() + i * 1000),
    });
    await db()('subscriptions').insert([...Array.from({ length: 55 }, (_, i) => row(i, 'paused')), row(60, 'active')]);
    const newest = await subscribe(customer.id, yearly);

    const { page, dialogs, close } = await kit.adminPage(`/admin/subscriptions?customerId=${customer.id}`);
    t.deepEqual(await texts(page, 'thead th'), [
      'Customer',
      'Plan',
      'Status',
      'Cycle',
      'Current period',
      'Trial end',
      'Cancels at period end',
    ]);
    const rows = await rowsOf(page, '');
    t.is(rows.length, 50);
    t.deepEqual(rows[0]!.slice(0, 4), ['<img src=x onerror=alert(1)>', yearly.name, 'active', 'yearly']);
    t.is(rows[0]![6], 'no');
    t.deepEqual(rows[1]!.slice(2, 5), ['active', 'monthly', '2026-01-01 – 2026-02-01']);
    t.is(
      await page.$eval('tbody tr:first-child td:nth-child(2) a', (a) => a.getAttribute('href')),
      `/admin/subscriptions/${newest.id}`,
    );
    t.is(
      await inputValue(page, 'form[action="/admin/subscriptions"] [name=customerId]'),
      customer.id,
      'the create form starts with the filtered customer',
    );

    await page.goto(
      `${kit.app.baseUrl}/admin/subscriptions?status=paused&customerId=${customer.id}&planId=${monthly.id}`,
    );
    t.is(await inputValue(page, '#filter-status'), 'paused');
    t.is(await inputValue(page, '#filter-plan'), monthly.id);
    t.is((await rowsOf(page, '')).length, 50);
    const next = new URL(await page.$eval('a[rel=next]', (a) => a.getAttribute('href')!), kit.app.baseUrl);
    t.deepEqual(
      [next.searchParams.get('status'), next.searchParams.get('customerId'), next.searchParams.get('planId')],
      ['paused', customer.id, monthly.id],
    );
    await Promise.all([page.waitForNavigation(), page.click('a[rel=next]')]);
    const rest = await rowsOf(page, '');
    t.is(rest.length, 5);
    t.true(rest.every((r) => r[2] === 'paused'));
    t.is(await page.$('a[rel=next]'), null);

    await page.goto(`${kit.app.baseUrl}/admin/subscriptions?status=canceled&customerId=${customer.id}`);
    t.deepEqual(await texts(page, '.empty'), ['No subscriptions match these filters.']);
    t.deepEqual(dialogs, []);
    await close();
  },
);

test.serial(
  'pause, resume and cancel through the status form, each with a confirmation; a move out of canceled is refused ' +
    'with the service message',
  async (t) => {
    const customer = await insertCustomer(db());
    const sub = await subscribe(customer.id, await makePlan(db(), '20.00'));
    const { page, close } = await kit.adminPage(`/admin/subscriptions/${sub.id}`);
    const action = `/admin/subscriptions/${sub.id}/status`;
    for (const [status, shown] of [
      ['paused', 'paused'],
      ['active', 'active'],
      ['canceled', 'canceled'],
    ] as const) {
      await submit(page, action, { status });
      if (status === 'canceled') {
        // Cancelling cannot be undone: it asks first (issue 34), and acts on the confirmation.
        t.regex((await texts(page, '.confirm'))[0]!, /Please confirm\. Cancelling ends the subscription now/);
        t.is((await subRow(sub.id)).status, 'active');
        await submit(page, action, {});
      }
      t.is(path(page), `/admin/subscriptions/${sub.id}`);
      t.is((await texts(page, '.notice'))[0], `The subscription is ${shown}.`);
      t.is((await subRow(sub.id)).status, status);
    }
    t.truthy((await subRow(sub.id)).canceled_at);
    t.deepEqual(await texts(page, '.actions'), [], 'a canceled subscription shows no forms');

    // The form is gone from the page; post it as a stale tab would.
    await page.evaluate(
      (url, csrf) => {
        const form = Object.assign(document.createElement('form'), { method: 'post', action: url });
        for (const [name, value] of [
          ['_csrf', csrf],
          ['_form', 'status'],
          ['status', 'active'],
        ])
          form.append(Object.assign(document.createElement('input'), { type: 'hidden', name, value }));
        document.body.append(form);
        form.submit();
      },
      action,
      await inputValue(page, 'input[name=_csrf]'),
    );
    await page.waitForNavigation();
    t.regex(await alertText(page), /A canceled subscription cannot change/);
    t.regex(await alertText(page), /subscription_canceled/);
    t.is(await inputValue(page, `form[action="${action}"] [name=status]`), 'active', 'what was chosen is kept');
    t.is((await subRow(sub.id)).status, 'canceled');
    await close();
  },
);

test.serial('cancel at period end is set and cleared; the list and the page say so', async (t) => {
  const customer = await insertCustomer(db());
  const sub = await subscribe(customer.id, await makePlan(db(), '20.00'));
  const { page, close } = await kit.adminPage(`/admin/subscriptions/${sub.id}`);
  const action = `/admin/subscriptions/${sub.id}/cancel-at-period-end`;
  t.is(await inputValue(page, `form[action="${action}"] [name=value]`), 'true', 'the form offers the other value');
  await submit(page, action, { value: 'true' });
  t.regex((await texts(page, '.notice'))[0] ?? '', /will cancel at the end of its period/);
  t.true((await subRow(sub.id)).cancel_at_period_end);
  await page.goto(`${kit.app.baseUrl}/admin/subscriptions?customerId=${customer.id}`);
  t.is((await rowsOf(page, ''))[0]![6], 'yes');
  await page.goto(`${kit.app.baseUrl}/admin/subscriptions/${sub.id}`);
  await submit(page, action, { value: 'false' });
  t.is((await texts(page, '.notice'))[0], 'The subscription will renew at the end of its period.');
  t.false((await subRow(sub.id)).cancel_at_period_end);
  t.is((await subRow(sub.id)).status, 'active');
  await close();
});

/** The preview's figures, read from the page. */
async function previewFigures(page: Page) {
  const amounts = (selector: string) =>
    page.$$eval(`${selector} dd[data-amount]`, (dds) => dds.map((d) => d.getAttribute('data-amount')!));
  const [credit] = await amounts('#credit');
  const [subtotal, tax, total] = await amounts('#charge');
  return { credit, subtotal, tax, total };
}

/** Chooses the new plan on the subscription's page and opens the preview. */
async function openPreview(page: Page, subId: string, newPlanId: string, prorate = 'true') {
  await page.goto(`${kit.app.baseUrl}/admin/subscriptions/${subId}`);
  await page.$eval('form[method=get][action$="/change-plan"]', (f) => f.closest('details')?.setAttribute('open', ''));
  await page.select('#change-plan-new', newPlanId);
  await page.select('form[method=get][action$="/change-plan"] [name=prorate]', prorate);
  await Promise.all([
    page.waitForNavigation(),
    page.click('form[method=get][action$="/change-plan"] button[type=submit]'),
  ]);
}

const eq = (a: string | undefined, b: string) => a !== undefined && money(a).eq(b);

test.serial(
  'the change-plan preview shows the credit and the charge that the change then creates, to the cent',
  async (t) => {
    const customer = await insertCustomer(db());
    const [basic, pro] = [await makePlan(db(), '30.00'), await makePlan(db(), '61.37')];
    const sub = await subscribe(customer.id, basic);
    // Part of the period used: the proration is a fraction, not the whole price.
    const periodStart = new Date(Date.now() - 9.5 * 86_400_000);
    await db()('subscriptions')
      .where({ id: sub.id })
      .update({
        current_period_start: periodStart,
        current_period_end: new Date(periodStart.getTime() + 31 * 86_400_000),
      });

    const { page, close } = await kit.adminPage(`/admin/subscriptions/${sub.id}`);
    await openPreview(page, sub.id, pro.id);
    t.is(path(page), `/admin/subscriptions/${sub.id}/change-plan`);
    t.is(await page.title(), 'Change plan: preview · Billing console');
    t.deepEqual(await texts(page, 'h1'), [`Change plan to ${pro.name}`]);
    const shown = await previewFigures(page);
    t.truthy(shown.credit);
    t.true(money(shown.credit!).gt(0) && money(shown.credit!).lt('30'));
    t.true(money(shown.total!).gt(0) && money(shown.total!).lt('61.37'));

    // The preview takes a while to read: the change still prorates from the preview's instant.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await submit(page, `/admin/subscriptions/${sub.id}/change-plan`, {});
    t.is(path(page), `/admin/subscriptions/${sub.id}`);
    t.is((await texts(page, '.notice'))[0], `Plan changed to ${pro.name}.`);
    t.is((await subRow(sub.id)).plan_id, pro.id);
    const credit = await db()('credit_ledger').where({ customer_id: customer.id, kind: 'proration' }).first();
    t.true(eq(shown.credit, credit.amount), `credit ${shown.credit} shown, ${credit.amount} granted`);
    const charge = await db()('invoices').where({ subscription_id: sub.id }).whereNull('period_start').first();
    t.true(eq(shown.subtotal, charge.subtotal), `charge ${shown.subtotal} shown, ${charge.subtotal} invoiced`);
    t.true(eq(shown.tax, charge.tax_amount));
    t.true(eq(shown.total, charge.total));
    await close();
  },
);

test.serial(
  'a new billing cycle: the preview shows the restarted period and its invoice, which the change issues for that ' +
    'period',
  async (t) => {
    const customer = await insertCustomer(db());
    const [monthly, yearly] = [await makePlan(db(), '10.00'), await makePlan(db(), '100.00', 'yearly')];
    const sub = await subscribe(customer.id, monthly);
    const { page, close } = await kit.adminPage(`/admin/subscriptions/${sub.id}`);
    await openPreview(page, sub.id, yearly.id);
    const shown = await previewFigures(page);
    const prorationDate = await inputValue(page, 'form[method=post] [name=prorationDate]');
    t.regex((await texts(page, 'dl.props dd')).join(' '), /restarts now/);
    await submit(page, `/admin/subscriptions/${sub.id}/change-plan`, {});
    const changed = await subRow(sub.id);
    t.like(changed, { plan_id: yearly.id, billing_cycle: 'yearly' });
    t.is(changed.current_period_start.toISOString(), prorationDate);
    const invoice = await db()('invoices')
      .where({ subscription_id: sub.id, period_start: changed.current_period_start })
      .first();
    t.true(eq(shown.total, invoice.total));
    t.true(eq(shown.total, '100'));
    const credit = await db()('credit_ledger').where({ customer_id: customer.id, kind: 'proration' }).first();
    t.true(eq(shown.credit, credit.amount));
    await close();
  },
);

test.serial('a refused change shows the service message on the subscription page and changes nothing', async (t) => {
  const customer = await insertCustomer(db());
  const [basic, euro] = [await makePlan(db(), '30.00'), await makePlan(db(), '30.00', 'monthly', 'EUR')];
  const sub = await subscribe(customer.id, basic);
  const { page, close } = await kit.adminPage(`/admin/subscriptions/${sub.id}`);
  const unknown = '00000000-0000-4000-8000-000000000000';
  await page.goto(`${kit.app.baseUrl}/admin/subscriptions/${sub.id}/change-plan?newPlanId=${unknown}&prorate=true`);
  t.regex(await alertText(page), new RegExp(`Plan ${unknown} does not exist`));
  t.regex(await alertText(page), /plan_not_found/);
  await page.goto(`${kit.app.baseUrl}/admin/subscriptions/${sub.id}/change-plan?newPlanId=${euro.id}`);
  t.regex(await alertText(page), /currency_mismatch/);

  // A preview whose plan was deactivated before the post: the post is refused with the service's message.
  const pro = await makePlan(db(), '40.00');
  await openPreview(page, sub.id, pro.id, 'false');
  await db()('plans').where({ id: pro.id }).update({ active: false });
  await submit(page, `/admin/subscriptions/${sub.id}/change-plan`, {});
  t.is(path(page), `/admin/subscriptions/${sub.id}/change-plan`);
  t.regex(await alertText(page), new RegExp(`Plan ${pro.id} is inactive`));
  t.is(await page.$eval('details:has(#change-plan-new)', (d) => d.hasAttribute('open')), true);
  t.like(await subRow(sub.id), { plan_id: basic.id });
  t.is(
    Number((await db()('credit_ledger').where({ customer_id: customer.id }).count<{ n: string }[]>('* as n'))[0]!.n),
    0,
  );
  await close();
});

test.serial('the detail page shows plan, periods, invoices, coupon, events and its audit entries', async (t) => {
  const customer = await insertCustomer(db(), { name: 'Detail Co' });
  const plan = await makePlan(db(), '25.00');
  const sub = await subscribe(customer.id, plan);
  const { page, close } = await kit.adminPage(`/admin/subscriptions/${sub.id}`);
  await submit(page, `/admin/subscriptions/${sub.id}/cancel-at-period-end`, { value: 'true' });
  t.deepEqual(await texts(page, 'h1'), [`${plan.name} for Detail Co`]);
  const invoices = await rowsOf(page, '#invoices');
  t.is(invoices.length, 1);
  t.is(invoices[0]![3], '25.00 USD');
  const events = (await rowsOf(page, '#events')).map((r) => r[1]);
  t.true(events.includes('subscription.created'));
  t.true(events.includes('subscription.updated'));
  t.true(events.includes('invoice.created'));
  const audit = await rowsOf(page, 'section[aria-labelledby=audit-heading]');
  t.is(audit[0]![2], 'subscription.cancel_at_period_end');
  t.is(audit[0]![1], kit.admin.email);
  t.regex(audit[0]![3]!, /cancelAtPeriodEnd: No → Yes/);
  await close();
});

test.serial('list, detail and preview read at 360 px without sideways scrolling', async (t) => {
  const customer = await insertCustomer(db(), { name: 'Narrow Screen Customer With A Long Name' });
  const [a, b] = [await makePlan(db(), '1234.50'), await makePlan(db(), '2345.60')];
  const sub = await subscribe(customer.id, a);
  for (const url of [
    '/admin/subscriptions',
    `/admin/subscriptions/${sub.id}`,
    `/admin/subscriptions/${sub.id}/change-plan?newPlanId=${b.id}`,
  ]) {
    const { page, close } = await kit.adminPage(url, 360);
    t.is((await texts(page, 'h1')).length, 1, url);
    await page.$$eval('details', (ds) => {
      for (const d of ds) d.setAttribute('open', '');
    });
    t.false(await scrollsSideways(page), url);
    await close();
  }
});
