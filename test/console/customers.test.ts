import test from 'ava';
import { loginAsAdmin } from '../helpers/auth.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { customerBatches } from '../../src/reporting/customer-view.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { makeInvoice, pay, type Ctx } from '../payments/fixtures.ts';
import { planHttp, productHttp } from '../subscriptions/fixtures.ts';
import { rowsOf, startConsoleKit, submit, texts, inputValue, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
let api: Ctx;
test.before(async () => {
  kit = await startConsoleKit();
  api = { baseUrl: kit.app.baseUrl, cookie: (await loginAsAdmin(kit.app.baseUrl, kit.app.db)).cookie, db: kit.app.db };
});
test.after.always(async () => kit?.close());

const call = (path: string, body?: unknown) => request(api.baseUrl, path, { cookie: api.cookie, body });
const count = async (table: string, where: Record<string, unknown> = {}) =>
  Number((await kit.app.db(table).where(where).count<{ n: string }[]>('* as n'))[0]!.n);

// Serial: the first test needs the database empty, and every test reads lists the others add to.
test.serial('an empty list says so and the export is only its header', async (t) => {
  const { page, close } = await kit.adminPage('/admin/customers');
  t.is(await page.title(), 'Customers · Billing console');
  t.deepEqual(await texts(page, '.empty'), ['No customers yet.']);
  t.is(await page.$('table'), null);
  await close();
  const csv = await fetch(`${kit.app.baseUrl}/admin/customers/export.csv`, { headers: { cookie: api.cookie } });
  t.is(await csv.text(), 'id,name,email,company,tier,currency,creditBalance,openAmount,createdAt (UTC)\r\n');
});

test.serial(
  'the list shows each customer newest first with tier, credit balance and open amount per currency',
  async (t) => {
    const owing = await insertCustomer(kit.app.db, {
      name: 'Owing Ltd',
      company: 'Owing Holdings',
      tier: 'enterprise',
    });
    const invoice = await makeInvoice(api, { customerId: owing.id, unitPrice: '1234.50' });
    await makeInvoice(api, { customerId: owing.id, unitPrice: '10.00', currency: 'EUR' });
    const credited = await insertCustomer(kit.app.db, { name: 'Credited Inc', tier: 'starter' });
    t.is((await call('/api/billing/credits', { customerId: credited.id, amount: '25.00' })).status, 201);

    const { page, close } = await kit.adminPage('/admin/customers');
    t.deepEqual(await texts(page, 'thead th'), ['Name', 'Email', 'Company', 'Tier', 'Credit balance', 'Open amount']);
    const rows = await rowsOf(page, '');
    t.deepEqual(rows[0], ['Credited Inc', credited.email, '', 'starter', '25.00 USD', '0.00 USD']);
    t.deepEqual(rows[1], [
      'Owing Ltd',
      owing.email,
      'Owing Holdings',
      'enterprise',
      '0.00 USD',
      '10.00 EUR1,234.50 USD',
    ]);
    t.is(await page.$eval('tbody tr:nth-child(2) a', (a) => a.getAttribute('href')), `/admin/customers/${owing.id}`);
    t.truthy(invoice.id);
    await close();
  },
);

test.serial(
  'search matches word prefixes as /api/search/customers does, tier filters in SQL, both survive paging',
  async (t) => {
    const db = kit.app.db;
    // 55 matching rows, a second apart, and one of another tier that the filter must leave out.
    const base = Date.parse('2026-01-01T00:00:00Z');
    await db('customers').insert(
      Array.from({ length: 55 }, (_, i) => ({
        name: `Pager Row ${i}`,
        email: `pager-${i}@example.test`,
        tier: 'professional',
        created_at: new Date(base + i * 1000),
      })),
    );
    await insertCustomer(db, { name: 'Pager Starter', tier: 'starter' });

    const { page, close } = await kit.adminPage('/admin/customers?q=pag%20ro&tier=professional');
    let names = (await rowsOf(page, '')).map((r) => r[0]);
    t.is(names.length, 50);
    t.is(names[0], 'Pager Row 54');
    t.is(await inputValue(page, '#q'), 'pag ro');
    t.is(await inputValue(page, '#tier'), 'professional');
    const next = await page.$eval('a[rel=next]', (a) => a.getAttribute('href')!);
    const params = new URL(next, kit.app.baseUrl).searchParams;
    t.is(params.get('q'), 'pag ro');
    t.is(params.get('tier'), 'professional');
    t.truthy(params.get('startingAfter'));
    await Promise.all([page.waitForNavigation(), page.click('a[rel=next]')]);
    names = (await rowsOf(page, '')).map((r) => r[0]);
    t.deepEqual(names, ['Pager Row 4', 'Pager Row 3', 'Pager Row 2', 'Pager Row 1', 'Pager Row 0']);
    t.is(await page.$('a[rel=next]'), null);

    await page.goto(`${kit.app.baseUrl}/admin/customers?q=pager&tier=starter`);
    t.deepEqual(
      (await rowsOf(page, '')).map((r) => r[0]),
      ['Pager Starter'],
    );
    await page.goto(`${kit.app.baseUrl}/admin/customers?q=${encodeURIComponent('"&|!')}`);
    t.deepEqual(await texts(page, '.empty'), ['No customers match these filters.']);
    t.is(await page.$eval('a[download]', (a) => a.getAttribute('href')), '/admin/customers/export.csv?q=%22%26%7C%21');
    await close();
  },
);

test.serial(
  'creating a customer redirects to its page with a confirmation; a taken email is refused with the service ' +
    'message and the typed values',
  async (t) => {
    const { page, close } = await kit.adminPage('/admin/customers');
    await submit(page, '/admin/customers', {
      name: 'Form Made',
      email: 'form-made@example.test',
      company: 'Forms Ltd',
      tier: 'enterprise',
      billingAddress: '1 Main St\nSpringfield',
      taxId: 'DE123',
    });
    const row = await kit.app.db('customers').where({ email: 'form-made@example.test' }).first();
    t.truthy(row);
    t.like(row, {
      name: 'Form Made',
      company: 'Forms Ltd',
      tier: 'enterprise',
      billing_address: '1 Main St\nSpringfield',
      tax_id: 'DE123',
    });
    t.is(new URL(page.url()).pathname, `/admin/customers/${row.id}`);
    t.regex((await texts(page, '.notice'))[0] ?? '', /Customer Form Made created/);

    const before = await count('customers');
    await page.goto(`${kit.app.baseUrl}/admin/customers`);
    await submit(page, '/admin/customers', { name: 'Second Try', email: 'FORM-MADE@example.test', company: 'Kept Co' });
    t.is(new URL(page.url()).pathname, '/admin/customers');
    const [alert] = await texts(page, '[role=alert]');
    t.regex(alert ?? '', /Another customer already uses this email address/);
    t.regex(alert ?? '', /email_taken/);
    t.is(await inputValue(page, 'form[action="/admin/customers"] [name=name]'), 'Second Try');
    t.is(await inputValue(page, 'form[action="/admin/customers"] [name=company]'), 'Kept Co');
    t.is(
      await page.$eval('form[action="/admin/customers"] [name=email]', (el) => el.getAttribute('aria-invalid')),
      'true',
    );

    await submit(page, '/admin/customers', { name: 'Bad Mail', email: 'not-an-email' });
    t.regex((await texts(page, '[role=alert]'))[0] ?? '', /must be an email address/);
    t.is(await count('customers'), before);
    await close();
  },
);

test.serial(
  "a customer's page shows its profile, ledger, subscriptions, invoices, payments, licenses, API keys and timeline",
  async (t) => {
    const customer = await insertCustomer(kit.app.db, {
      name: 'Full House',
      company: 'House Co',
      tier: 'professional',
      billing_address: 'Line 1\nLine 2',
    });
    const adminApi = (path: string, options: { body?: unknown } = {}) => call(path, options.body);
    const plan = await planHttp(adminApi, { name: 'Gold monthly' });
    t.is(
      (
        await call('/api/billing/subscriptions', {
          customerId: customer.id,
          planId: plan.id,
          billingCycle: 'monthly',
          trialDays: 14,
        })
      ).status,
      201,
    );
    const invoice = await makeInvoice(api, { customerId: customer.id, unitPrice: '200.00' });
    t.is((await pay(api, { invoiceId: invoice.id, amount: '50.00', providerReference: 'ref-full-house' })).status, 201);
    const product = await productHttp(adminApi, { name: 'Desktop app', productType: 'licensed' });
    const license = await call('/api/licenses', { customerId: customer.id, productId: product.id, maxActivations: 3 });
    t.is(license.status, 201);
    const key = await call('/api/api-keys', { name: 'CI key', customerId: customer.id });
    t.is(key.status, 201);
    t.is(
      (await call('/api/billing/credits', { customerId: customer.id, amount: '20.00', description: 'Goodwill' }))
        .status,
      201,
    );

    const { page, close } = await kit.adminPage(`/admin/customers/${customer.id}`);
    t.deepEqual(await texts(page, 'h1'), ['Full House']);
    t.deepEqual(await texts(page, 'h2'), [
      'Profile',
      'Credit ledger',
      'Subscriptions',
      'Invoices',
      'Payments',
      'Licenses',
      'API keys',
      'Emails',
      'Timeline',
      'Audit log',
    ]);
    t.deepEqual(await texts(page, '.card .value'), ['0.00 USD', '130.00 USD', '100']);
    const profile = (await texts(page, 'dl.props dd')).join('|');
    t.true(
      profile.includes('House Co') && profile.includes('professional') && profile.includes('Desktop app'),
      profile,
    );

    const ledger = await rowsOf(page, '#ledger');
    t.deepEqual(
      ledger.map((r) => [r[1], r[4], r[5]]),
      [
        ['application', '-20.00 USD', '0.00 USD'],
        ['credit', '20.00 USD', '20.00 USD'],
      ],
    );
    t.is((await rowsOf(page, '#subscriptions'))[0]![0], 'Gold monthly');
    const invoices = await rowsOf(page, '#invoices');
    t.deepEqual(invoices[0]!.slice(0, 4), [invoice.invoiceNumber, 'issued', '200.00 USD', '130.00 USD']);
    t.is(await page.$eval('#invoices tbody a', (a) => a.getAttribute('href')), `/admin/invoices/${invoice.id}`);
    const payments = await rowsOf(page, '#payments');
    t.deepEqual(payments[0]!.slice(1, 6), [invoice.invoiceNumber, '50.00 USD', '0.00 USD', 'Manual', 'ref-full-house']);
    t.deepEqual((await rowsOf(page, '#licenses'))[0]!.slice(0, 4), [
      license.body.licenseKey,
      'Desktop app',
      'active',
      '0 / 3',
    ]);
    const keys = await rowsOf(page, '#api-keys');
    t.is(keys[0]![0], 'CI key');
    t.true(key.body.key.startsWith(keys[0]![1]), 'the prefix of the key is shown');
    t.false((await page.content()).includes(key.body.key), 'the secret never is');

    const timeline = (await rowsOf(page, '#timeline')).map((r) => r[1]);
    t.deepEqual(timeline, ['license.created', 'payment.succeeded', 'invoice.created', 'subscription.created']);
    t.deepEqual(
      await kit.app
        .db('events')
        .whereRaw(`data->>'customerId' = ?`, [customer.id])
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .pluck('type'),
      timeline,
    );
    await close();
  },
);

test.serial("an empty customer's page says so in every section; an unknown id is a 404 page", async (t) => {
  const customer = await insertCustomer(kit.app.db, { name: 'Nobody Yet' });
  const { page, close } = await kit.adminPage(`/admin/customers/${customer.id}`);
  t.deepEqual(await texts(page, '.empty'), [
    'No store credit yet.',
    'No subscriptions.',
    'No invoices.',
    'No payments.',
    'No licenses.',
    'No API keys.',
    'No emails.',
    'No events yet.',
    'No admin action recorded on this yet.',
  ]);
  t.deepEqual(await texts(page, '.card .value'), ['0.00 USD', '0.00 USD', '100']);
  await close();
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
    const res = await fetch(`${kit.app.baseUrl}/admin/customers/${id}`, { headers: { cookie: api.cookie } });
    t.is(res.status, 404, id);
    t.regex(await res.text(), /Customer not found/);
  }
});

test.serial('editing saves through the API service; a refusal keeps what was typed and changes nothing', async (t) => {
  const customer = await insertCustomer(kit.app.db, { name: 'Editable', company: 'Old Co', tier: 'starter' });
  const other = await insertCustomer(kit.app.db, { name: 'Other' });
  const { page, close } = await kit.adminPage(`/admin/customers/${customer.id}`);
  t.is(await inputValue(page, `form[action="/admin/customers/${customer.id}"] [name=company]`), 'Old Co');
  await submit(page, `/admin/customers/${customer.id}`, { company: 'New Co', tier: 'enterprise', taxId: '' });
  t.regex((await texts(page, '.notice'))[0] ?? '', /Customer updated/);
  t.like(await kit.app.db('customers').where({ id: customer.id }).first(), {
    name: 'Editable',
    company: 'New Co',
    tier: 'enterprise',
    tax_id: null,
  });

  const before = await kit.app.db('customers').where({ id: customer.id }).first();
  await submit(page, `/admin/customers/${customer.id}`, { name: 'Typed Name', email: other.email });
  t.regex((await texts(page, '[role=alert]'))[0] ?? '', /Another customer already uses this email address/);
  t.is(await inputValue(page, `form[action="/admin/customers/${customer.id}"] [name=name]`), 'Typed Name');
  t.true(await page.$eval(`form[action="/admin/customers/${customer.id}"]`, (f) => f.closest('details')!.open));
  await submit(page, `/admin/customers/${customer.id}`, { name: '  ' });
  t.regex((await texts(page, '[role=alert]'))[0] ?? '', /name: must not be empty/);
  t.deepEqual(await kit.app.db('customers').where({ id: customer.id }).first(), before);
  await close();
});

test.serial(
  'granting credit spends it on an open invoice and shows it in the ledger; zero or negative is refused and ' +
    'changes nothing',
  async (t) => {
    const customer = await insertCustomer(kit.app.db, { name: 'Creditworthy' });
    const invoice = await makeInvoice(api, { customerId: customer.id, unitPrice: '100.00' });
    const { page, close } = await kit.adminPage(`/admin/customers/${customer.id}`);
    const action = `/admin/customers/${customer.id}/credits`;
    t.is(await inputValue(page, `form[action="${action}"] [name=currency]`), 'USD');
    await submit(page, action, { amount: '30.00', description: 'Sorry for the outage' });
    t.regex(
      (await texts(page, '.notice'))[0] ?? '',
      new RegExp(`Granted 30.00 USD of store credit; 30.00 USD applied to ${invoice.invoiceNumber}. Balance: 0.00 USD`),
    );
    const ledger = await rowsOf(page, '#ledger');
    t.deepEqual(
      ledger.map((r) => [r[1], r[2], r[4]]),
      [
        ['application', `Applied to ${invoice.invoiceNumber}`, '-30.00 USD'],
        ['credit', 'Sorry for the outage', '30.00 USD'],
      ],
    );
    t.is((await rowsOf(page, '#invoices'))[0]![3], '70.00 USD');
    t.deepEqual(await texts(page, '.card .value'), ['0.00 USD', '70.00 USD', '100']);

    const entries = await count('credit_ledger', { customer_id: customer.id });
    for (const amount of ['0', '-5.00']) {
      await submit(page, action, { amount, description: 'Nope' });
      t.regex((await texts(page, '[role=alert]'))[0] ?? '', /amount: must be greater than 0/, amount);
      t.is(await inputValue(page, `form[action="${action}"] [name=amount]`), amount);
      t.is(await inputValue(page, `form[action="${action}"] [name=description]`), 'Nope');
    }
    t.is(await count('credit_ledger', { customer_id: customer.id }), entries);
    t.is(Number((await kit.app.db('invoices').where({ id: invoice.id }).first()).credit_applied), 30);
    await close();
  },
);

test.serial(
  'the CSV export streams every filtered row with a header, decimal amounts, ISO times and the formula guard',
  async (t) => {
    const risky = await insertCustomer(kit.app.db, {
      name: '=HYPERLINK("http://evil")',
      company: 'Csv, "Quoted" Co',
      tier: 'enterprise',
    });
    await makeInvoice(api, { customerId: risky.id, unitPrice: '1234.56' });
    await insertCustomer(kit.app.db, { name: 'Csv Starter', tier: 'starter' });
    const get = async (query: string) => {
      const res = await fetch(`${kit.app.baseUrl}/admin/customers/export.csv${query}`, {
        headers: { cookie: api.cookie },
      });
      t.is(res.status, 200);
      t.is(res.headers.get('content-type'), 'text/csv; charset=utf-8');
      // C-17: the file starts with a byte order mark, so a spreadsheet reads UTF-8.
      return (await res.text())
        .replace(/^\uFEFF/, '')
        .split('\r\n')
        .filter(Boolean);
    };
    const all = await get('');
    t.is(all[0], 'id,name,email,company,tier,currency,creditBalance,openAmount,createdAt (UTC)');
    t.is(all.length - 1, (await count('customers')) + 1, 'one line per customer, two for the one owing in USD and EUR');
    const line = all.find((l) => l.startsWith(risky.id))!;
    const created = (await kit.app.db('customers').where({ id: risky.id }).first()).created_at
      .toISOString()
      .slice(0, 19)
      .replace('T', ' ');
    t.is(
      line,
      `${risky.id},"'=HYPERLINK(""http://evil"")",${risky.email},"Csv, ""Quoted"" ` +
        `Co",enterprise,USD,0.00,1234.56,${created}`,
    );

    const enterprise = await get('?tier=enterprise');
    t.true(enterprise.slice(1).every((l) => l.includes(',enterprise,')));
    t.true(enterprise.some((l) => l.startsWith(risky.id)));
    t.deepEqual(
      (await get('?q=csv&tier=starter')).slice(1).map((l) => l.split(',')[1]),
      ['Csv Starter'],
    );
    t.is((await get('?tier=professional')).length - 1, await count('customers', { tier: 'professional' }));
  },
);

test.serial('a customer named like markup shows as text on its page and opens no dialog', async (t) => {
  const name = '<img src=x onerror=alert(1)>';
  const customer = await insertCustomer(kit.app.db, { name, company: '<script>alert(2)</script>' });
  const { page, dialogs, close } = await kit.adminPage(`/admin/customers/${customer.id}`);
  t.deepEqual(await texts(page, 'h1'), [name]);
  t.is(await page.title(), `${name} · Billing console`);
  t.is(await page.$('main img'), null);
  t.true((await texts(page, 'dl.props dd')).includes('<script>alert(2)</script>'));
  t.deepEqual(dialogs, []);
  await close();
});

test.serial('list and detail read at 360 px without sideways scrolling, with one h1', async (t) => {
  const customer = await insertCustomer(kit.app.db, {
    name: 'A very long customer name that keeps going and going without end',
    company: 'Wide Company International Holdings',
  });
  await makeInvoice(api, { customerId: customer.id, unitPrice: '98765.43' });
  for (const path of ['/admin/customers', `/admin/customers/${customer.id}`]) {
    const { page, close } = await kit.adminPage(path, 360);
    t.is((await page.$$('h1')).length, 1, path);
    t.false(await scrollsSideways(page), path);
    await page.$$eval('details', (ds) => {
      for (const d of ds) d.setAttribute('open', '');
    });
    t.false(await scrollsSideways(page), `${path} with its forms open`);
    await close();
  }
});

test.serial(
  'the export batches walk every matching customer once, newest first, whatever the batch size',
  async (t) => {
    const seen: string[] = [];
    for await (const batch of customerBatches(kit.app.db, { tier: 'professional' }, 7)) {
      t.true(batch.length <= 7);
      seen.push(...batch.map((c) => c.id));
    }
    const expected = await kit.app
      .db('customers')
      .where({ tier: 'professional' })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .pluck('id');
    t.deepEqual(seen, expected);
  },
);

test.serial('the forms refuse a post without the CSRF token and change nothing', async (t) => {
  const customer = await insertCustomer(kit.app.db, { name: 'Guarded' });
  const before = await count('customers');
  for (const path of [
    '/admin/customers',
    `/admin/customers/${customer.id}`,
    `/admin/customers/${customer.id}/credits`,
  ]) {
    const res = await fetch(`${kit.app.baseUrl}${path}`, {
      method: 'POST',
      headers: { cookie: api.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Forged&email=forged%40example.test&amount=10',
      redirect: 'manual',
    });
    t.is(res.status, 403, path);
  }
  t.is(await count('customers'), before);
  t.is((await kit.app.db('customers').where({ id: customer.id }).first()).name, 'Guarded');
  t.is(await count('credit_ledger', { customer_id: customer.id }), 0);
});
