import test from 'ava';
import { insertCustomer } from '../helpers/factories.ts';
import { newPage, scrollsSideways, signIn } from '../helpers/browser.ts';
import { createUser, startConsoleKit, texts, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

test('C-1: / redirects to /admin, and /admin without a session to the login page with next', async (t) => {
  const root = await fetch(`${kit.app.baseUrl}/`, { redirect: 'manual' });
  t.is(root.status, 302);
  t.is(root.headers.get('location'), '/admin');
  const page = await fetch(`${kit.app.baseUrl}/admin/customers?tier=starter`, { redirect: 'manual' });
  t.is(page.status, 302);
  t.is(page.headers.get('location'), '/admin/login?next=%2Fadmin%2Fcustomers%3Ftier%3Dstarter');
});

test('C-2: a good password signs in and lands on next; the session cookie is the API one', async (t) => {
  const { page, close } = await newPage(kit.browser);
  await signIn(page, kit.app.baseUrl, kit.admin.email, kit.admin.password, '/admin/customers');
  t.is(new URL(page.url()).pathname, '/admin/customers');
  t.is(await page.title(), 'Customers · Billing console');
  const cookies = await page.browserContext().cookies();
  t.truthy(cookies.find((c) => c.name === 'session' && c.httpOnly));
  const api = await page.evaluate(async () => (await fetch('/api/customers')).status);
  t.is(api, 200);
  await close();
});

test(
  'C-2: a bad password shows the form again with a message naming neither field; ' + 'next only goes to /admin',
  async (t) => {
    const { page, close } = await newPage(kit.browser);
    await signIn(page, kit.app.baseUrl, kit.admin.email, 'wrong password', '/admin');
    t.is(new URL(page.url()).pathname, '/admin/login');
    const [message] = await texts(page, '[role=alert]');
    t.truthy(message);
    t.false(/email|password/i.test(message!.replace(/email or password/i, '')), message);
    t.truthy(await page.$('input[name=email]'));
    await signIn(page, kit.app.baseUrl, kit.admin.email, kit.admin.password, 'https://evil.example/admin');
    t.is(new URL(page.url()).pathname, '/admin');
    await close();
  },
);

test('C-7: a user without the admin role sees nothing', async (t) => {
  const user = await createUser(kit.app, 'user');
  const { page, close } = await newPage(kit.browser);
  await signIn(page, kit.app.baseUrl, user.email, user.password, '/admin/customers');
  t.is(new URL(page.url()).pathname, '/admin/login');
  t.regex((await texts(page, '[role=alert]'))[0] ?? '', /not an admin/);
  await close();
});

// Serial: it counts the sessions, which the other tests of this file add to.
test.serial(
  'C-6: a POST without the CSRF token is 403 and changes nothing; sign-out with it ends the session',
  async (t) => {
    const { page, close } = await kit.adminPage('/admin');
    const before = await kit.app.db('sessions').count<{ count: number }[]>('* as count');
    const refused = await page.evaluate(async () => {
      const res = await fetch('/admin/logout', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'x=1',
        redirect: 'manual',
      });
      return res.status;
    });
    t.is(refused, 403);
    t.deepEqual(await kit.app.db('sessions').count<{ count: number }[]>('* as count'), before);
    await Promise.all([page.waitForNavigation(), page.click('.logout button')]);
    t.is(new URL(page.url()).pathname, '/admin/login');
    await page.goto(`${kit.app.baseUrl}/admin`);
    t.is(new URL(page.url()).pathname, '/admin/login');
    await close();
  },
);

test(
  'C-7: a customer named like markup shows as text and opens no dialog; the headers forbid inline script and ' +
    'framing',
  async (t) => {
    const name = '<img src=x onerror=alert(1)>';
    await insertCustomer(kit.app.db, { name });
    const { page, dialogs, close } = await kit.adminPage('/admin/customers');
    t.true((await texts(page, 'td a')).includes(name));
    t.is(await page.$('td img'), null);
    t.deepEqual(dialogs, []);
    const res = await fetch(`${kit.app.baseUrl}/admin/login`);
    const csp = res.headers.get('content-security-policy') ?? '';
    t.regex(csp, /frame-ancestors 'none'/);
    t.regex(csp, /script-src 'self'/);
    t.false(/unsafe-inline|unsafe-eval/.test(csp));
    await close();
  },
);

test('C-3, C-8: every page has the navigation, one h1 and no sideways scrolling at 360 px', async (t) => {
  for (const path of ['/admin', '/admin/customers']) {
    const { page, close } = await kit.adminPage(path, 360);
    t.deepEqual(await texts(page, 'nav a'), [
      'Overview',
      'Customers',
      'Invoices',
      'Payments',
      'Subscriptions',
      'Products',
      'Licenses',
      'Webhooks',
      'Settings',
      'Audit log',
    ]);
    t.is((await page.$$('h1')).length, 1, path);
    t.false(await scrollsSideways(page), path);
    await close();
  }
});

test(
  'C-2: next is resolved (dot segments, %2e%2e, ' + 'encoded slashes, backslashes) and must stay under /admin',
  async (t) => {
    const cases: [string, string][] = [
      ['/admin/../docs', '/admin'],
      ['/admin/%2e%2e/api/settings', '/admin'],
      ['/admin/%2E%2e/%2e%2E/docs', '/admin'],
      ['/admin/customers/%2e%2e%2f..%2f..%2fdocs', '/admin'],
      ['/admin%2f..%2fdocs', '/admin'],
      ['/admin\\..\\docs', '/admin'],
      ['/\\evil.example/admin', '/admin'],
      ['//evil.example/admin', '/admin'],
      ['/administrator', '/admin'],
      ['/admin/%zz', '/admin'],
      ['/admin/./customers?tier=starter', '/admin/customers?tier=starter'],
      ['/admin/invoices/../customers', '/admin/customers'],
      ['/admin', '/admin'],
    ];
    for (const [next, expected] of cases) {
      // The login page carries the resolved path in its form...
      const html = await (await fetch(`${kit.app.baseUrl}/admin/login?next=${encodeURIComponent(next)}`)).text();
      t.true(
        html.includes(`name="next" value="${expected.replace(/&/g, '&amp;')}"`),
        `${next}: ${html.match(/name="next" value="[^"]*"/)?.[0]}`,
      );
    }
    // ...and a posted next that was never resolved by the login page is resolved again when signing in.
    const { page, close } = await newPage(kit.browser);
    for (const next of ['/admin/../docs', '/admin/%2e%2e/api/settings']) {
      await page.goto(`${kit.app.baseUrl}/admin/login`);
      await page.$eval('input[name=next]', (el, v) => ((el as HTMLInputElement).value = v), next);
      await page.type('input[name=email]', kit.admin.email);
      await page.type('input[name=password]', kit.admin.password);
      await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
      t.is(new URL(page.url()).pathname, '/admin', next);
      await page.deleteCookie({ name: 'session', url: kit.app.baseUrl });
    }
    await close();
  },
);
