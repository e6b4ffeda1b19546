/** Console licenses (console.md "operations"): the list, search and filters, create, edit, status, device removal. */
import test from 'ava';
import type { Browser, Page } from 'puppeteer';
import { newPage, scrollsSideways, signIn, testBrowser } from '../helpers/browser.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import {
  createProduct,
  issueLicense,
  startLicenseApp,
  validate,
  verify,
  type License,
  type LicenseKit,
} from '../licenses/fixtures.ts';
import { createUser, rowsOf, submit, texts, inputValue } from './fixtures.ts';

let kit: LicenseKit;
let browser: Browser;
let closeBrowser: () => Promise<void>;
let admin: { email: string; password: string };
test.before(async () => {
  kit = await startLicenseApp();
  ({ browser, close: closeBrowser } = await testBrowser());
  admin = await createUser(kit.app, 'admin');
});
test.after.always(async () => {
  await closeBrowser?.();
  await kit?.close();
});

async function adminPage(path: string, width = 1280): Promise<{ page: Page; close(): Promise<void> }> {
  const opened = await newPage(browser, width);
  await signIn(opened.page, kit.app.baseUrl, admin.email, admin.password, path);
  return opened;
}

const db = () => kit.app.db;
const licenseRow = (key: string) => db()('licenses').where({ license_key: key }).first();
const url = (path: string) => `${kit.app.baseUrl}${path}`;

// Serial: the first test needs no license yet, and every test reads lists the others add to.
test.serial('an empty list says so, with its title, one h1 and the Licenses section current', async (t) => {
  const { page, close } = await adminPage('/admin/licenses');
  t.is(await page.title(), 'Licenses · Billing console');
  t.deepEqual(await texts(page, 'h1'), ['Licenses']);
  t.deepEqual(await texts(page, 'nav a[aria-current=page]'), ['Licenses']);
  t.deepEqual(await texts(page, '.empty'), ['No licenses yet.']);
  t.is(await page.$('main table'), null);
  await close();
});

test.serial(
  'the list shows key, customer (markup as text), product, status, activations used/limit and expiry, newest ' +
    'first; it fits 360 px',
  async (t) => {
    const customer = await insertCustomer(db(), { name: '<img src=x onerror=alert(1)>' });
    const product = await createProduct(kit, 'Studio Pro');
    const older = await issueLicense(kit, {
      customerId: customer.id,
      productId: product.id,
      maxActivations: 3,
      expiresAt: '2031-05-01',
    });
    t.true((await validate(kit, older.licenseKey, 'laptop-1')).body.valid);
    const newer = await issueLicense(kit, { customerId: customer.id, productId: product.id });

    const { page, close } = await adminPage('/admin/licenses', 360);
    t.deepEqual(await texts(page, 'thead th'), ['Key', 'Customer', 'Product', 'Status', 'Activations', 'Expires']);
    const rows = await rowsOf(page, '');
    t.deepEqual(rows[0], [newer.licenseKey, '<img src=x onerror=alert(1)>', 'Studio Pro', 'active', '0 / ∞', 'never']);
    t.deepEqual(rows[1], [
      older.licenseKey,
      '<img src=x onerror=alert(1)>',
      'Studio Pro',
      'active',
      '1 / 3',
      '2031-05-01 00:00 UTC',
    ]);
    t.is(await page.$('main img'), null, 'the name is text, not markup');
    t.is(
      await page.$eval('tbody tr:nth-child(2) a', (a) => a.getAttribute('href')),
      `/admin/licenses/${older.licenseKey}`,
    );
    t.is(
      await page.$eval('tbody tr:nth-child(2) td:nth-child(2) a', (a) => a.getAttribute('href')),
      `/admin/customers/${customer.id}`,
    );
    t.false(await scrollsSideways(page));
    await close();
  },
);

test.serial(
  'q matches the beginning of a key (any case) or a customer by name or email prefix; status and customerId ' +
    'filter; each is a URL',
  async (t) => {
    const acme = await insertCustomer(db(), { name: 'Acmeville Tools', email: 'buyer@acmeville.test' });
    const other = await insertCustomer(db(), { name: 'Zephyr Labs', email: 'it@zephyr.test' });
    const a1 = await issueLicense(kit, { customerId: acme.id });
    const a2 = await issueLicense(kit, { customerId: acme.id });
    const z1 = await issueLicense(kit, { customerId: other.id });
    t.is(
      (await kit.admin(`/api/licenses/${a2.licenseKey}`, { method: 'PUT', body: { status: 'suspended' } })).status,
      200,
    );

    const { page, close } = await adminPage(
      `/admin/licenses?q=${encodeURIComponent(z1.licenseKey.slice(0, 11).toLowerCase())}`,
    );
    const keys = async () => (await rowsOf(page, '')).map((r) => r[0]);
    t.deepEqual(await keys(), [z1.licenseKey]);
    t.is(await inputValue(page, '#filter-q'), z1.licenseKey.slice(0, 11).toLowerCase());

    await page.goto(url('/admin/licenses?q=acmev'));
    t.deepEqual(await keys(), [a2.licenseKey, a1.licenseKey]);
    await page.goto(url('/admin/licenses?q=buyer%40acmeville'));
    t.deepEqual(await keys(), [a2.licenseKey, a1.licenseKey]);
    await page.goto(url('/admin/licenses?q=acmev&status=suspended'));
    t.deepEqual(await keys(), [a2.licenseKey]);
    t.is(await inputValue(page, '#filter-status'), 'suspended');
    await page.goto(url(`/admin/licenses?customerId=${other.id}`));
    t.deepEqual(await keys(), [z1.licenseKey]);
    t.is(
      await inputValue(page, 'form[action="/admin/licenses"] [name=customerId]'),
      other.id,
      'the create form starts with the filtered customer',
    );

    // The filter form is a GET: submitting it makes the URL.
    await page.goto(url('/admin/licenses'));
    await page.$eval('#filter-q', (el) => ((el as HTMLInputElement).value = 'zephyr'));
    await Promise.all([page.waitForNavigation(), page.click('form.filters button[type=submit]')]);
    t.is(new URL(page.url()).search, '?q=zephyr&status=&customerId=');
    t.deepEqual(await keys(), [z1.licenseKey]);

    await page.goto(url(`/admin/licenses?q=${encodeURIComponent('nobody-at-all "&|!')}`));
    t.deepEqual(await texts(page, '.empty'), ['No licenses match these filters.']);
    await page.goto(url('/admin/licenses?status=bogus'));
    t.regex((await texts(page, 'main'))[0] ?? '', /filter it does not understand/);
    await close();
  },
);

test.serial('55 licenses of one customer page by 50 newest first, the search kept in the next link', async (t) => {
  const customer = await insertCustomer(db(), { name: 'Pagewell Corp' });
  const product = await createProduct(kit, 'Paged Product');
  const base = Date.parse('2026-02-01T00:00:00Z');
  await db()('licenses').insert(
    Array.from({ length: 55 }, (_, i) => ({
      license_key: `PGW-0000-0000-${String(i).padStart(4, '0')}`,
      customer_id: customer.id,
      product_id: product.id,
      created_at: new Date(base + i * 1000),
    })),
  );

  const { page, close } = await adminPage('/admin/licenses?q=pagewell');
  let keys = (await rowsOf(page, '')).map((r) => r[0]);
  t.is(keys.length, 50);
  t.is(keys[0], 'PGW-0000-0000-0054');
  const next = new URL(await page.$eval('a[rel=next]', (a) => a.getAttribute('href')!), kit.app.baseUrl);
  t.is(next.searchParams.get('q'), 'pagewell');
  t.truthy(next.searchParams.get('startingAfter'));
  await Promise.all([page.waitForNavigation(), page.click('a[rel=next]')]);
  keys = (await rowsOf(page, '')).map((r) => r[0]);
  t.deepEqual(keys, [
    'PGW-0000-0000-0004',
    'PGW-0000-0000-0003',
    'PGW-0000-0000-0002',
    'PGW-0000-0000-0001',
    'PGW-0000-0000-0000',
  ]);
  t.is(await page.$('a[rel=next]'), null);
  // The same 55 by key prefix.
  await page.goto(url('/admin/licenses?q=pgw-0000'));
  t.is((await rowsOf(page, '')).length, 50);
  t.truthy(await page.$('a[rel=next]'));
  await close();
});

test.serial(
  'issuing a license redirects to its page; bad features JSON and an unknown product are refused with the message ' +
    'and the typed text kept',
  async (t) => {
    const customer = await insertCustomer(db(), { name: 'Form Buyer' });
    const product = await createProduct(kit, 'Form Product');
    const { page, close } = await adminPage('/admin/licenses');
    const form = 'form[action="/admin/licenses"]';
    const count = async () => Number((await db()('licenses').count<{ n: string }[]>('* as n'))[0]!.n);
    const before = await count();

    await submit(page, '/admin/licenses', {
      customerId: customer.id,
      productId: product.id,
      maxActivations: '2',
      expiresAt: '2030-01-31',
      features: '{"pro": tru',
    });
    t.is(new URL(page.url()).pathname, '/admin/licenses');
    const [alert] = await texts(page, '[role=alert]');
    t.regex(alert ?? '', /features: must be a JSON object.*not valid JSON/);
    t.regex(alert ?? '', /invalid_request/);
    t.is(await inputValue(page, `${form} [name=features]`), '{"pro": tru');
    t.is(await inputValue(page, `${form} [name=maxActivations]`), '2');
    t.is(await inputValue(page, `${form} [name=customerId]`), customer.id);
    t.is(await page.$eval(`${form} [name=features]`, (el) => el.getAttribute('aria-invalid')), 'true');

    await submit(page, '/admin/licenses', {
      productId: '00000000-0000-4000-8000-000000000000',
      features: '{"pro": true}',
    });
    t.regex(
      (await texts(page, '[role=alert]'))[0] ?? '',
      /Product 00000000-0000-4000-8000-000000000000 does not exist.*product_not_found/,
    );
    t.is(await count(), before);

    await submit(page, '/admin/licenses', {
      productId: product.id,
      features: '{"pro": true, "seats": 5, "plugins": ["git"]}',
    });
    const row = await db()('licenses').where({ customer_id: customer.id }).first();
    t.like(row, {
      product_id: product.id,
      max_activations: 2,
      features: { pro: true, seats: 5, plugins: ['git'] },
      status: 'active',
    });
    t.is(row.expires_at.toISOString(), '2030-01-31T00:00:00.000Z');
    t.is(new URL(page.url()).pathname, `/admin/licenses/${row.license_key}`);
    t.deepEqual(await texts(page, '.notice'), [`License ${row.license_key} issued.`]);
    await close();
  },
);

test.serial(
  "a license's page shows features, devices with name, activation and last seen, and its audit entries",
  async (t) => {
    const license = await issueLicense(kit, { maxActivations: 4, features: { pro: true, seats: 5 } });
    t.true((await validate(kit, license.licenseKey, 'dev-a', 'Ana <b>laptop</b>')).body.valid);
    t.true((await validate(kit, license.licenseKey, 'dev/b', 'Ben desktop')).body.valid);

    const { page, close } = await adminPage(`/admin/licenses/${license.licenseKey.toLowerCase()}`, 360);
    t.is(await page.title(), `${license.licenseKey} · Billing console`);
    t.deepEqual(await texts(page, 'h1'), [license.licenseKey]);
    t.deepEqual(await texts(page, 'h2'), ['Features', 'Activations', 'Audit log']);
    t.deepEqual(await rowsOf(page, '#features'), [
      ['pro', 'true'],
      ['seats', '5'],
    ]);
    const devices = await rowsOf(page, '#activations');
    t.deepEqual(
      devices.map((r) => r.slice(0, 2)),
      [
        ['dev/b', 'Ben desktop'],
        ['dev-a', 'Ana <b>laptop</b>'],
      ],
    );
    t.regex(devices[0]![2]!, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    t.regex(devices[0]![3]!, /UTC$/);
    const props = (await texts(page, 'dl.props dd')).join('|');
    t.true(props.startsWith('active|License Holder|Desktop Suite|2 / 4|never'), props);
    t.deepEqual(
      (await rowsOf(page, '#audit-heading + *')).map((r) => r[2]),
      ['license.create'],
    );
    t.false(await scrollsSideways(page));

    await page.goto(url('/admin/licenses/LIC-NONE-NONE-NONE'));
    t.regex((await texts(page, 'main'))[0] ?? '', /License not found/);
    await close();
  },
);

test.serial(
  'editing limits, expiry and features saves them; maxActivations 0 is refused with the schema message and the ' +
    'typed values kept',
  async (t) => {
    const license = await issueLicense(kit, { maxActivations: 2, features: { pro: true } });
    const action = `/admin/licenses/${license.licenseKey}`;
    const { page, close } = await adminPage(action);
    t.is(await inputValue(page, `form[action="${action}"] [name=maxActivations]`), '2');
    t.deepEqual(JSON.parse(await inputValue(page, `form[action="${action}"] [name=features]`)), { pro: true });

    await submit(page, action, { maxActivations: '0', expiresAt: '2032-03-04', features: '{"pro": false}' });
    t.regex(
      (await texts(page, '[role=alert]'))[0] ?? '',
      /maxActivations: must be an integer >= 1, or null for unlimited/,
    );
    t.is(await inputValue(page, `form[action="${action}"] [name=maxActivations]`), '0');
    t.is(await inputValue(page, `form[action="${action}"] [name=expiresAt]`), '2032-03-04');
    t.like(await licenseRow(license.licenseKey), { max_activations: 2, features: { pro: true }, expires_at: null });

    await submit(page, action, {
      maxActivations: '7',
      expiresAt: '2032-03-04',
      features: '{"pro": false, "seats": 9}',
    });
    t.is(new URL(page.url()).pathname, action);
    t.deepEqual(await texts(page, '.notice'), ['License updated.']);
    const row = await licenseRow(license.licenseKey);
    t.like(row, { max_activations: 7, features: { pro: false, seats: 9 } });
    t.is(row.expires_at.toISOString(), '2032-03-04T00:00:00.000Z');

    // Emptied fields clear: unlimited, no expiry, no features.
    await submit(page, action, { maxActivations: '', expiresAt: '', features: '' });
    t.like(await licenseRow(license.licenseKey), { max_activations: null, expires_at: null, features: {} });
    await close();
  },
);

test.serial(
  'a license suspended from the console answers valid false at /api/licenses/verify; reinstated, valid again; a ' +
    'revoked one refuses with the service message',
  async (t) => {
    const license: License = await issueLicense(kit, { features: { pro: true } });
    const action = `/admin/licenses/${license.licenseKey}/status`;
    const { page, close } = await adminPage(`/admin/licenses/${license.licenseKey}`);

    await submit(page, action, { status: 'suspended' });
    t.deepEqual(await texts(page, '.notice'), ['License suspended.']);
    t.is((await licenseRow(license.licenseKey)).status, 'suspended');
    const suspended = await verify(kit, license.licenseKey);
    t.is(suspended.status, 200);
    t.deepEqual(suspended.body, { valid: false, status: 'suspended', features: { pro: true }, expiresAt: null });
    t.like((await validate(kit, license.licenseKey, 'new-device')).body, { valid: false, error: 'license_suspended' });

    await submit(page, action, { status: 'active' });
    t.deepEqual(await texts(page, '.notice'), ['License reinstated.']);
    t.like((await verify(kit, license.licenseKey)).body, { valid: true, status: 'active' });

    // Revoked through the API while the page is open: the page's form is refused by the service.
    t.is(
      (await kit.admin(`/api/licenses/${license.licenseKey}`, { method: 'PUT', body: { status: 'revoked' } })).status,
      200,
    );
    await submit(page, action, { status: 'active' });
    const [alert] = await texts(page, '[role=alert]');
    t.regex(alert ?? '', /A revoked license cannot change status/);
    t.regex(alert ?? '', /license_revoked/);
    t.is(await inputValue(page, `form[action="${action}"] [name=status]`), 'active');
    t.is((await licenseRow(license.licenseKey)).status, 'revoked');
    await page.goto(url(`/admin/licenses/${license.licenseKey}`));
    t.is(await page.$(`form[action="${action}"]`), null, 'a revoked license offers no status change');
    t.regex((await texts(page, 'main'))[0] ?? '', /Revoked is final/);
    await close();
  },
);

test.serial(
  'removing a device frees its slot at once; removing it again from a stale page says it is gone',
  async (t) => {
    const license = await issueLicense(kit, { maxActivations: 2 });
    t.true((await validate(kit, license.licenseKey, 'dev/1 x', 'First')).body.valid);
    t.true((await validate(kit, license.licenseKey, 'dev-2', 'Second')).body.valid);
    t.like((await validate(kit, license.licenseKey, 'dev-3')).body, {
      valid: false,
      error: 'activation_limit_reached',
    });

    const { page, close } = await adminPage(`/admin/licenses/${license.licenseKey}`);
    const action = `/admin/licenses/${license.licenseKey}/activations/${encodeURIComponent('dev/1 x')}/delete`;
    const stale = await page.$eval('input[name=_csrf]', (i) => (i as HTMLInputElement).value);
    await submit(page, action, {});
    t.is(new URL(page.url()).pathname, `/admin/licenses/${license.licenseKey}`);
    t.deepEqual(await texts(page, '.notice'), ['Device dev/1 x removed.']);
    t.deepEqual(
      (await rowsOf(page, '#activations')).map((r) => r[0]),
      ['dev-2'],
    );
    t.like(await licenseRow(license.licenseKey), { current_activations: 1 });
    t.true((await validate(kit, license.licenseKey, 'dev-3')).body.valid, 'the freed slot takes a new device');

    // The same form again (as from a page loaded before the removal).
    const res = await fetch(url(action), {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: (await page.cookies()).map((c) => `${c.name}=${c.value}`).join('; '),
      },
      body: new URLSearchParams({ _csrf: stale, _form: 'remove-device' }).toString(),
    });
    t.is(res.status, 404);
    t.regex(await res.text(), /Activation not found/);
    t.like(await licenseRow(license.licenseKey), { current_activations: 2 });
    await close();
  },
);

test.serial('a form post without the CSRF field is refused and changes nothing', async (t) => {
  const license = await issueLicense(kit);
  const res = await request(kit.app.baseUrl, `/admin/licenses/${license.licenseKey}/status`, {
    rawBody: 'status=suspended',
    cookie: kit.cookie,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(res.status, 403);
  t.is((await licenseRow(license.licenseKey)).status, 'active');
});

test.serial(
  "a floating license's page shows each device's last heartbeat and whether it is live or dead; the edit form sets " +
    'the interval',
  async (t) => {
    const license = await issueLicense(kit, { maxActivations: 3, heartbeatIntervalSeconds: 60 });
    t.true((await validate(kit, license.licenseKey, 'beating', 'Beating box')).body.valid);
    t.true((await validate(kit, license.licenseKey, 'gone-quiet', 'Quiet box')).body.valid);
    await db()('license_activations')
      .where({ license_id: license.id, device_id: 'gone-quiet' })
      .update({ last_seen_at: db().raw(`now() - interval '150 seconds'`) });

    const action = `/admin/licenses/${license.licenseKey}`;
    const { page, close } = await adminPage(action, 360);
    t.deepEqual(await texts(page, '#activations thead th'), [
      'Device ID',
      'Name',
      'Activated',
      'Last heartbeat or validate',
      'State',
      'Remove',
    ]);
    const devices = await rowsOf(page, '#activations');
    t.deepEqual(
      devices.map((r) => [r[0], r[4]]),
      [
        ['gone-quiet', 'dead'],
        ['beating', 'live'],
      ],
    );
    t.regex(devices[1]![3]!, /UTC$/);
    const props = (await texts(page, 'dl.props dd')).join('|');
    t.regex(props, /\|2 \/ 3 \(1 dead: its seat is free\)\|/);
    t.regex(props, /every 60 s; a device silent for 120 s is dead/);
    t.is(await inputValue(page, `form[action="${action}"] [name=heartbeatIntervalSeconds]`), '60');
    t.false(await scrollsSideways(page));

    await submit(page, action, { heartbeatIntervalSeconds: '5' });
    t.regex(
      (await texts(page, '[role=alert]'))[0] ?? '',
      /heartbeatIntervalSeconds: must be an integer number of seconds from 10 to 86400/,
    );
    t.is(await inputValue(page, `form[action="${action}"] [name=heartbeatIntervalSeconds]`), '5');
    t.is((await licenseRow(license.licenseKey)).heartbeat_interval_seconds, 60);

    // A longer interval: the quiet device (150 s) is live again; empty turns heartbeats off.
    await submit(page, action, { heartbeatIntervalSeconds: '100' });
    t.deepEqual(await texts(page, '.notice'), ['License updated.']);
    t.is((await licenseRow(license.licenseKey)).heartbeat_interval_seconds, 100);
    t.deepEqual(
      (await rowsOf(page, '#activations')).map((r) => r[4]),
      ['live', 'live'],
    );
    await submit(page, action, { heartbeatIntervalSeconds: '' });
    t.is((await licenseRow(license.licenseKey)).heartbeat_interval_seconds, null);
    t.regex((await texts(page, 'dl.props dd')).join('|'), /\|off\|/);
    await close();
  },
);

test.serial('the create form takes heartbeatIntervalSeconds', async (t) => {
  const customer = await insertCustomer(db(), { name: 'Floating Buyer' });
  const product = await createProduct(kit, 'Floating Product');
  const { page, close } = await adminPage('/admin/licenses');
  await submit(page, '/admin/licenses', {
    customerId: customer.id,
    productId: product.id,
    heartbeatIntervalSeconds: '600',
  });
  const row = await db()('licenses').where({ customer_id: customer.id }).first();
  t.is(row.heartbeat_interval_seconds, 600);
  t.is(new URL(page.url()).pathname, `/admin/licenses/${row.license_key}`);
  await close();
});
