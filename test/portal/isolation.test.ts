/**
 * P-3 security: the portal shows only the signed-in customer's records. Another customer's subscription or license id
 * in any portal URL (page or form) is 404 and changes nothing; another customer's invoice never appears; a
 * malformed id is 404 too.
 */
import test from 'ava';
import { request } from '../helpers/http.ts';
import {
  makePortalCustomer,
  portalCookie,
  portalCsrf,
  postForm,
  startPortalWorld,
  type PortalWorld,
} from './fixtures.ts';

let w: PortalWorld;
test.before(async () => {
  w = await startPortalWorld();
});
test.after.always(async () => w?.close());

test("another customer's subscription, license or invoice id in a portal URL is 404, changing nothing", async (t) => {
  const mine = await makePortalCustomer(w, 'Mine');
  const theirs = await makePortalCustomer(w, 'Theirs');
  const cookie = await portalCookie(w, mine.customer.id);
  const csrf = await portalCsrf(w, cookie);
  const sub = `/portal/subscriptions/${theirs.sub.id}`;
  const license = `/portal/licenses/${theirs.license.id}`;
  for (const path of [
    sub,
    `${sub}/change-plan?newPlanId=${theirs.pro.id}`,
    license,
    `/portal/subscriptions/${theirs.invoice.id}`,
    `/portal/licenses/${theirs.invoice.id}`,
    '/portal/subscriptions/not-a-uuid',
    '/portal/licenses/1',
  ]) {
    const res = await request(w.app.baseUrl, path, { cookie });
    t.is(res.status, 404, path);
    t.false(res.text.includes('Theirs'), path);
  }
  for (const [path, fields] of [
    [`${sub}/cancel`, {}],
    [`${sub}/keep`, {}],
    [`${sub}/change-plan`, { newPlanId: theirs.pro.id, prorationDate: new Date().toISOString() }],
    [`${license}/deactivate`, { deviceId: 'laptop-1' }],
    [`${license}/license-file`, { deviceId: 'laptop-1' }],
  ] as const) {
    const res = await postForm(w, path, cookie, { _csrf: csrf, ...fields });
    t.is(res.status, 404, path);
  }
  const after = await w.app.db('subscriptions').where({ id: theirs.sub.id }).first();
  t.false(after.cancel_at_period_end);
  t.is(after.plan_id, theirs.basic.id);
  t.is((await w.app.db('licenses').where({ id: theirs.license.id }).first()).current_activations, 2);
  t.is((await w.app.db('audit_log').where({ actor: `customer:${mine.customer.id}` })).length, 0);
  const invoices = await request(w.app.baseUrl, '/portal/invoices', { cookie });
  t.true(invoices.text.includes(mine.invoice.invoiceNumber));
  t.false(invoices.text.includes(theirs.invoice.invoiceNumber));
  // The changing plan offered is one of the subscription's own product; another product's plan is refused.
  const foreignPlan = await request(
    w.app.baseUrl,
    `/portal/subscriptions/${mine.sub.id}/change-plan?newPlanId=${theirs.pro.id}`,
    { cookie },
  );
  t.is(foreignPlan.status, 400);
  t.true(foreignPlan.text.includes('Choose one of the plans listed'));
});

test('without a session every portal page leads to the sign-in page and every POST is refused', async (t) => {
  const theirs = await makePortalCustomer(w, 'Nobody Signed In');
  for (const path of ['/portal', '/portal/invoices', `/portal/subscriptions/${theirs.sub.id}`, '/portal/billing']) {
    const res = await request(w.app.baseUrl, path, { redirect: 'manual' });
    t.is(res.status, 302, path);
    t.is(res.headers.get('location'), '/portal/login');
  }
  const res = await postForm(w, `/portal/subscriptions/${theirs.sub.id}/cancel`, '', {});
  t.is(res.status, 403);
  t.false((await w.app.db('subscriptions').where({ id: theirs.sub.id }).first()).cancel_at_period_end);
});
