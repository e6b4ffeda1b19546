/**
 * C-11 console: `/admin/audit-log` (who, what, which object, changes, from where), its filters and paging; the invoice
 * page's entries.
 */
import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { recordAudits } from '../../src/audit/service.ts';
import { createInvoice } from '../../src/invoices/service.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { line } from './invoices-fixtures.ts';
import { rowsOf, startConsoleKit, submit, texts, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
let cookie: string;
let apiEmail: string;
test.before(async () => {
  kit = await startConsoleKit();
  ({ cookie, email: apiEmail } = await loginAsAdmin(kit.app.baseUrl, kit.app.db));
});
test.after.always(async () => kit?.close());

const call = (path: string, body?: unknown, method?: string) =>
  request(kit.app.baseUrl, path, { cookie, body, method });
const HOSTILE = '<b>Bold</b> & <img src=x onerror=alert(1)>';
const COLUMNS = ['When', 'Who', 'Action', 'Object', 'Changes', 'From', 'Request id'];
const WHO = 1;
const ACTION = 2;
const OBJECT = 3;
const CHANGES = 4;

test.serial(
  'entries newest first with who, action, object (linked), changes before → after, IP and request id; markup as text',
  async (t) => {
    const created = await request(kit.app.baseUrl, '/api/customers', {
      cookie,
      body: { name: 'Audit Page Co', email: 'audit-page@example.test' },
      headers: { 'x-request-id': 'req-page-1' },
    });
    const id = created.body.id as string;
    t.is((await call(`/api/customers/${id}`, { name: HOSTILE }, 'PUT')).status, 200);

    const { page, dialogs, close } = await kit.adminPage(`/admin/audit-log?targetType=customer&targetId=${id}`);
    t.is(await page.title(), 'Audit log · Billing console');
    t.deepEqual(await texts(page, 'h1'), ['Audit log']);
    t.is(await page.$eval('nav a[aria-current=page]', (a) => a.textContent), 'Audit log');
    t.deepEqual(await texts(page, 'thead th'), COLUMNS);
    const rows = await rowsOf(page, '');
    t.deepEqual(
      rows.map((r) => r[ACTION]),
      ['customer.update', 'customer.create'],
    );
    t.deepEqual(
      rows.map((r) => r[WHO]),
      [apiEmail, apiEmail],
    );
    t.is(rows[0]![OBJECT], `customer ${HOSTILE}`);
    t.is(rows[0]![CHANGES], `name: Audit Page Co → ${HOSTILE}`);
    t.regex(rows[1]![CHANGES]!, /name: Audit Page Co/);
    t.regex(rows[1]![5]!, /127\.0\.0\.1/);
    t.is(rows[1]![6], 'req-page-1');
    t.deepEqual(
      await page.$$eval('tbody tr:first-child td:nth-child(4) a', (as) => as.map((a) => a.getAttribute('href'))),
      [`/admin/customers/${id}`],
    );
    // The name's markup is text: no element came of it, and no script ran.
    t.is(await page.$('ul.changes b, ul.changes img, td b'), null);
    t.deepEqual(dialogs, []);
    await close();
  },
);

test.serial(
  'filters narrow the list: actor by email (the console admin) and `system`, target type and id; the form makes ' +
    'the URL',
  async (t) => {
    const customer = await insertCustomer(kit.app.db, { name: 'Filter Target' });
    // The console admin grants credit; the service creates an invoice by itself (system); the API admin updates.
    const { page, close } = await kit.adminPage(`/admin/customers/${customer.id}`);
    await submit(page, `/admin/customers/${customer.id}/credits`, {
      amount: '12.00',
      currency: 'USD',
      description: 'Filter test',
    });
    const { invoice } = await createInvoice(
      kit.app.db,
      { customerId: customer.id, currency: 'USD', status: 'issued', lineItems: [line('40.00')] },
      SYSTEM_ACTOR,
    );
    t.is((await call(`/api/customers/${customer.id}`, { tier: 'starter' }, 'PUT')).status, 200);

    await page.goto(`${kit.app.baseUrl}/admin/audit-log`);
    await page.type('#filter-actor', kit.admin.email.toUpperCase());
    await page.select('#filter-target-type', 'customer');
    await page.type('#filter-target-id', customer.id);
    await Promise.all([page.waitForNavigation(), page.click('form.filters button[type=submit]')]);
    const url = new URL(page.url());
    t.is(url.searchParams.get('actor'), kit.admin.email.toUpperCase());
    t.is(url.searchParams.get('targetId'), customer.id);
    let rows = await rowsOf(page, '');
    t.deepEqual(
      rows.map((r) => [r[WHO], r[ACTION]]),
      [[kit.admin.email, 'credit.grant']],
    );
    t.regex(rows[0]![CHANGES]!, /amount: 12\.00/);
    t.is(await page.$eval('#filter-actor', (el) => (el as HTMLInputElement).value), kit.admin.email.toUpperCase());

    await page.goto(`${kit.app.baseUrl}/admin/audit-log?actor=system&targetType=invoice&targetId=${invoice.id}`);
    rows = await rowsOf(page, '');
    t.deepEqual(
      rows.map((r) => [r[WHO], r[ACTION], r[OBJECT]]),
      [['system', 'invoice.create', `invoice ${invoice.invoice_number}`]],
    );
    t.is(await page.$eval('tbody td:nth-child(4) a', (a) => a.getAttribute('href')), `/admin/invoices/${invoice.id}`);

    await page.goto(`${kit.app.baseUrl}/admin/audit-log?targetType=customer&targetId=${customer.id}`);
    t.deepEqual(
      (await rowsOf(page, '')).map((r) => r[ACTION]),
      ['customer.update', 'credit.grant'],
    );
    await close();
  },
);

test.serial('paging by cursor keeps the filters; an unmatched filter says so', async (t) => {
  const target = `paging.${Date.now()}`;
  await recordAudits(
    kit.app.db,
    SYSTEM_ACTOR,
    Array.from({ length: 55 }, (_, n) => ({
      action: 'setting.update',
      targetType: 'setting',
      targetId: target,
      before: { value: n },
      after: { value: n + 1 },
    })),
  );
  const { page, close } = await kit.adminPage(`/admin/audit-log?actor=system&targetType=setting&targetId=${target}`);
  let rows = await rowsOf(page, '');
  t.is(rows.length, 50);
  t.is(rows[0]![CHANGES], 'value: 54 → 55');
  const next = new URL(await page.$eval('a[rel=next]', (a) => (a as HTMLAnchorElement).href));
  t.deepEqual(
    [next.searchParams.get('actor'), next.searchParams.get('targetType'), next.searchParams.get('targetId')],
    ['system', 'setting', target],
  );
  t.truthy(next.searchParams.get('startingAfter'));
  await Promise.all([page.waitForNavigation(), page.click('a[rel=next]')]);
  rows = await rowsOf(page, '');
  t.deepEqual(
    rows.map((r) => r[CHANGES]),
    ['value: 4 → 5', 'value: 3 → 4', 'value: 2 → 3', 'value: 1 → 2', 'value: 0 → 1'],
  );
  t.is(await page.$('a[rel=next]'), null);
  // A settings key has no page of its own: the object is named, not linked.
  t.is(await page.$('tbody td:nth-child(4) a'), null);

  await page.goto(
    `${kit.app.baseUrl}/admin/audit-log?targetType=invoice&targetId=00000000-0000-4000-8000-000000000000`,
  );
  t.deepEqual(await texts(page, '.empty'), ['No admin action matches these filters.']);
  t.is(await page.$('table'), null);
  await close();
});

test.serial('a filter the log does not understand is refused (400), as the API refuses it', async (t) => {
  const answer = await fetch(`${kit.app.baseUrl}/admin/audit-log?targetType=Customer!`, { headers: { cookie } });
  t.is(answer.status, 400);
  const { page, close } = await kit.adminPage('/admin/audit-log?action=void');
  t.regex(await page.$eval('main', (m) => m.textContent ?? ''), /filter it does not understand/);
  await close();
});

test.serial('at 360 px the page does not scroll sideways', async (t) => {
  const { page, close } = await kit.adminPage('/admin/audit-log', 360);
  t.true((await rowsOf(page, '')).length > 0);
  t.false(await scrollsSideways(page));
  await close();
});

test.serial('the invoice page shows its own entries: created, issued, paid', async (t) => {
  const customer = await insertCustomer(kit.app.db, { name: 'Invoice Trail' });
  const created = await call('/api/billing/invoices', { customerId: customer.id, lineItems: [line('80.00')] });
  const id = created.body.id as string;
  t.is((await call(`/api/billing/invoices/${id}`, { status: 'issued' }, 'PUT')).status, 200);
  t.is((await call('/api/billing/payments', { invoiceId: id, amount: '80.00', paymentMethod: 'manual' })).status, 201);

  const { page, close } = await kit.adminPage(`/admin/invoices/${id}`);
  const rows = await rowsOf(page, 'section[aria-labelledby=audit-heading]');
  t.deepEqual(
    rows.map((r) => r[2]),
    ['payment.record', 'invoice.issue', 'invoice.create'],
  );
  t.deepEqual(
    rows.map((r) => r[1]),
    [apiEmail, apiEmail, apiEmail],
  );
  t.regex(rows[0]![3]!, /status: issued → paid/);
  t.regex(rows[0]![3]!, /amountPaid: 0\.00 → 80\.00/);
  t.is(
    await page.$eval('section[aria-labelledby=audit-heading] p a', (a) => a.getAttribute('href')),
    `/admin/audit-log?targetType=invoice&targetId=${id}`,
  );
  await close();
});
