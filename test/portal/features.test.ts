/**
 * P-7 `portal.features`: validated (an unknown value is 400 and changes nothing), editable on the console's Settings
 * page; a switched-off feature shows no control (Chromium, 1280 and 360 px) and its POST is 403 and changes nothing.
 */
import test from 'ava';
import { consoleCsrf } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
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

const setFeatures = (features: unknown) =>
  request(w.app.baseUrl, '/api/settings', { method: 'PUT', cookie: w.c.cookie, body: { 'portal.features': features } });

test.serial(
  'portal.features defaults to all four; an unknown or repeated value is 400 and changes nothing',
  async (t) => {
    const all = ['cancel', 'change_plan', 'billing_details', 'deactivate_devices'];
    t.deepEqual((await request(w.app.baseUrl, '/api/settings', { cookie: w.c.cookie })).body['portal.features'], all);
    const unknown = await setFeatures(['cancel', 'refunds']);
    t.is(unknown.status, 400);
    t.is(unknown.body.error.code, 'invalid_request');
    t.regex(JSON.stringify(unknown.body.error.details), /portal\.features/);
    t.is((await setFeatures(['cancel', 'cancel'])).status, 400);
    t.is((await setFeatures('cancel')).status, 400);
    t.deepEqual((await request(w.app.baseUrl, '/api/settings', { cookie: w.c.cookie })).body['portal.features'], all);
  },
);

test.serial("the console's Settings page shows and edits portal.features", async (t) => {
  const page = await request(w.app.baseUrl, '/admin/settings', { cookie: w.c.cookie });
  t.true(page.text.includes('setting-portal.features'));
  const csrf = await consoleCsrf(w.app.baseUrl, w.c.cookie);
  const post = (value: string) =>
    fetch(`${w.app.baseUrl}/admin/settings`, {
      method: 'POST',
      headers: { cookie: w.c.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, _form: 'settings', 'portal.features': value }).toString(),
      redirect: 'manual',
    });
  const refused = await post('cancel, refunds');
  t.is(refused.status, 400);
  t.true((await refused.text()).includes('must be one of cancel, change_plan, billing_details, deactivate_devices'));
  const saved = await post('cancel, billing_details');
  t.is(saved.status, 303);
  const read = await request(w.app.baseUrl, '/api/settings', { cookie: w.c.cookie });
  t.deepEqual(read.body['portal.features'], ['cancel', 'billing_details']);
});

test.serial('switched off: no control at 1280 and 360 px, each POST 403 and nothing changes', async (t) => {
  t.is((await setFeatures([])).status, 200);
  const world = await makePortalCustomer(w, 'Feature Less');
  for (const width of [1280, 360]) {
    const { page, close } = await portalPage(w, world.customer.id, width);
    await page.goto(`${w.app.baseUrl}/portal/subscriptions/${world.sub.id}`);
    const buttons = await page.$$eval('button', (bs) => bs.map((b) => b.textContent));
    t.deepEqual(buttons, ['Sign out']);
    t.is(await page.$('select[name=newPlanId]'), null);
    await page.goto(`${w.app.baseUrl}/portal/licenses/${world.license.id}`);
    const licenseButtons = await page.$$eval('button', (bs) => bs.map((b) => b.textContent));
    t.false(licenseButtons.includes('Deactivate'));
    t.true(licenseButtons.includes('Download license file'), 'not one of the four features');
    await page.goto(`${w.app.baseUrl}/portal/billing`);
    t.is(await page.$('input[name=name]'), null);
    t.true((await bodyText(page)).includes('Feature Less'));
    t.true(await fitsWidth(page));
    await close();
  }
  const cookie = await portalCookie(w, world.customer.id);
  const csrf = await portalCsrf(w, cookie);
  const sub = `/portal/subscriptions/${world.sub.id}`;
  for (const [path, fields] of [
    [`${sub}/cancel`, {}],
    [`${sub}/keep`, {}],
    [`${sub}/change-plan`, { newPlanId: world.pro.id, prorationDate: new Date().toISOString() }],
    [`/portal/licenses/${world.license.id}/deactivate`, { deviceId: 'laptop-1' }],
    ['/portal/billing', { name: 'Changed' }],
  ] as const) {
    const res = await postForm(w, path, cookie, { _csrf: csrf, ...fields });
    t.is(res.status, 403, path);
  }
  t.is((await request(w.app.baseUrl, `${sub}/change-plan?newPlanId=${world.pro.id}`, { cookie })).status, 403);
  const after = await w.app.db('subscriptions').where({ id: world.sub.id }).first();
  t.false(after.cancel_at_period_end);
  t.is(after.plan_id, world.basic.id);
  t.is((await w.app.db('licenses').where({ id: world.license.id }).first()).current_activations, 2);
  t.is((await w.app.db('customers').where({ id: world.customer.id }).first()).name, 'Feature Less');
  t.is((await w.app.db('audit_log').where({ actor: `customer:${world.customer.id}` })).length, 0);

  t.is((await setFeatures(['cancel'])).status, 200);
  t.is((await postForm(w, `${sub}/cancel`, cookie, { _csrf: csrf })).status, 303, 'switched back on');
  t.is((await postForm(w, '/portal/billing', cookie, { _csrf: csrf, name: 'Changed' })).status, 403);
});
