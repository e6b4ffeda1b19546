/**
 * P-2 sign-in by emailed code: the form by field name in Chromium at 1280 and 360 px, the same answer for an unknown
 * email, the code stored hashed, 5 wrong tries lock it, 15 minutes, one active code per customer, the sign-in
 * token on both forms, and the limit on asking.
 */
import test from 'ava';
import { newPage } from '../helpers/browser.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { waitFor } from '../helpers/wait.ts';
import { bodyText, emailedCode, fitsWidth, signInClient, startPortalWorld, type PortalWorld } from './fixtures.ts';

let w: PortalWorld;
test.before(async () => {
  w = await startPortalWorld();
});
test.after.always(async () => w?.close());

for (const width of [1280, 360]) {
  test(`at ${width} px: email, then the emailed code, signs in to /portal`, async (t) => {
    const customer = await insertCustomer(w.app.db, { name: `Code User ${width}`, email: `code-${width}@buyer.test` });
    const { page, close } = await newPage(w.browser, width);
    t.teardown(close);
    await page.goto(`${w.app.baseUrl}/portal/login`);
    t.true((await bodyText(page)).includes('Acme Software'));
    t.true(await fitsWidth(page));
    await page.screenshot({ path: `docs/screenshots/portal-login-${width}.png`, fullPage: true });
    await page.type('input[name=email]', customer.email);
    await Promise.all([page.waitForNavigation(), page.click('form button[type=submit]')]);
    t.true((await bodyText(page)).includes(`If ${customer.email} is the address of an account`));
    t.is(await page.$eval('input[name=email]', (i) => (i as HTMLInputElement).value), customer.email);
    t.true(await fitsWidth(page));
    await page.screenshot({ path: `docs/screenshots/portal-login-code-${width}.png`, fullPage: true });
    const code = await emailedCode(w, customer.id);
    const row = await w.app.db('portal_codes').where({ customer_id: customer.id }).first();
    t.regex(row.code_hash, /^[0-9a-f]{64}$/);
    t.false(row.code_hash.includes(code), 'only a hash is stored');
    t.true(row.expires_at.getTime() - Date.now() > 14 * 60_000 && row.expires_at.getTime() - Date.now() <= 15 * 60_000);
    await page.type('input[name=code]', code);
    await Promise.all([page.waitForNavigation(), page.click('form button[type=submit]')]);
    t.is(new URL(page.url()).pathname, '/portal');
    t.true((await bodyText(page)).includes(`Code User ${width}`));
    t.is((await w.app.db('portal_codes').where({ customer_id: customer.id })).length, 0, 'a used code is gone');
    await Promise.all([page.waitForNavigation(), page.click('xpath/.//button[normalize-space()="Sign out"]')]);
    t.is(new URL(page.url()).pathname, '/portal/login');
    await page.goto(`${w.app.baseUrl}/portal/invoices`);
    t.is(new URL(page.url()).pathname, '/portal/login', 'signed out');
  });
}

test('an unknown email gets the same page, and no code or email is made', async (t) => {
  const customer = await insertCustomer(w.app.db, { email: 'known@buyer.test' });
  const client = await signInClient(w);
  const known = await client.post('/portal/login', { email: 'known@buyer.test' });
  const unknown = await client.post('/portal/login', { email: 'nobody@buyer.test' });
  t.is(known.status, 200);
  t.is(unknown.status, 200);
  const same = (html: string, email: string) => html.replaceAll(email, '<email>');
  t.is(same(await known.text(), 'known@buyer.test'), same(await unknown.text(), 'nobody@buyer.test'));
  const done = await waitFor(
    async () =>
      (
        await w.app.db.raw(
          "select output from pgboss.job where name = 'portal.send-code' and data->>'email' = ? " +
            "and state = 'completed'",
          ['nobody@buyer.test'],
        )
      ).rows,
    (rows) => rows.length === 1,
  );
  t.deepEqual(done[0].output, { sent: false }, 'the lookup ran and found nobody');
  await emailedCode(w, customer.id);
  t.is((await w.app.db('emails').where({ type: 'portal.code', customer_id: customer.id })).length, 1);
});

test('5 wrong codes lock the code: the right one is refused after them', async (t) => {
  const customer = await insertCustomer(w.app.db, { email: 'locked@buyer.test' });
  const client = await signInClient(w);
  await client.post('/portal/login', { email: customer.email });
  const code = await emailedCode(w, customer.id);
  const wrong = code === '000000' ? '000001' : '000000';
  for (let i = 0; i < 5; i += 1) {
    const res = await client.post('/portal/login/code', { email: customer.email, code: wrong });
    t.is(res.status, 401);
    t.true((await res.text()).includes('The code is wrong or no longer valid'));
  }
  t.is((await w.app.db('portal_codes').where({ customer_id: customer.id }).first()).tries, 5);
  const right = await client.post('/portal/login/code', { email: customer.email, code });
  t.is(right.status, 401, 'locked');
  t.is(right.headers.get('set-cookie'), null);
  t.is((await w.app.db('portal_sessions').where({ customer_id: customer.id })).length, 0);
});

test('one active code per customer: a new code replaces the old one; a code lasts 15 minutes', async (t) => {
  const customer = await insertCustomer(w.app.db, { email: 'twice@buyer.test' });
  const client = await signInClient(w);
  await client.post('/portal/login', { email: customer.email });
  const first = await emailedCode(w, customer.id);
  await client.post('/portal/login', { email: customer.email });
  const second = await emailedCode(w, customer.id, 1);
  t.is((await w.app.db('portal_codes').where({ customer_id: customer.id })).length, 1);
  if (first !== second) {
    const old = await client.post('/portal/login/code', { email: customer.email, code: first });
    t.is(old.status, 401, 'the replaced code no longer works');
  }
  await w.app
    .db('portal_codes')
    .where({ customer_id: customer.id })
    .update({ expires_at: new Date(Date.now() - 1) });
  const late = await client.post('/portal/login/code', { email: customer.email, code: second });
  t.is(late.status, 401, 'after 15 minutes');
  await client.post('/portal/login', { email: customer.email });
  const third = await emailedCode(w, customer.id, 2);
  const ok = await client.post('/portal/login/code', { email: ` ${customer.email.toUpperCase()} `, code: third });
  t.is(ok.status, 303);
  t.is(ok.headers.get('location'), '/portal');
  t.regex(ok.headers.get('set-cookie')!, /^portal_session=/);
});

test('both sign-in forms need their token: without it nothing is asked or checked (403)', async (t) => {
  const customer = await insertCustomer(w.app.db, { email: 'forged@buyer.test' });
  const forged = await fetch(`${w.app.baseUrl}/portal/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: customer.email }).toString(),
  });
  t.is(forged.status, 403);
  const check = await fetch(`${w.app.baseUrl}/portal/login/code`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: customer.email, code: '123456' }).toString(),
  });
  t.is(check.status, 403);
  const jobs = await w.app.db.raw(
    "select count(*)::int as n from pgboss.job where name = 'portal.send-code' and data->>'email' = ?",
    [customer.email],
  );
  t.is(jobs.rows[0].n, 0);
});

test('an email field that holds no address is refused at once (400), asking nothing', async (t) => {
  const client = await signInClient(w);
  for (const email of ['', '   ', 'not-an-email', 'a@b']) {
    const res = await client.post('/portal/login', { email });
    t.is(res.status, 400, JSON.stringify(email));
    const html = await res.text();
    t.true(html.includes('Enter the email address your invoices are sent to, such as name@example.com.'));
    t.true(html.includes('name="email"'), 'the form again');
  }
  const jobs = await w.app.db.raw(
    "select count(*)::int as n from pgboss.job where name = 'portal.send-code' and data->>'email' in ('', 'a@b')",
  );
  t.is(jobs.rows[0].n, 0);
});

test('asking for codes is limited per address, with the same answer for a known and an unknown one', async (t) => {
  const customer = await insertCustomer(w.app.db, { email: 'flood@buyer.test' });
  const client = await signInClient(w);
  const statuses = async (email: string) => {
    const seen: number[] = [];
    for (let i = 0; i < 6; i += 1) seen.push((await client.post('/portal/login', { email })).status);
    return seen;
  };
  t.deepEqual(await statuses(customer.email), [200, 200, 200, 200, 200, 429]);
  t.deepEqual(await statuses('flood-unknown@buyer.test'), [200, 200, 200, 200, 200, 429]);
});
