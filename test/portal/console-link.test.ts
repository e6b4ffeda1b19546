/**
 * The console's "Customer portal" button (issue 37, must-show 4) at 1280 and 360 px: it creates a portal session
 * and shows its link once to copy; the link signs the customer in; the admin's action is audited.
 */
import test from 'ava';
import { loginAs } from '../helpers/auth.ts';
import { newPage, scrollsSideways, signIn } from '../helpers/browser.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { bodyText, startPortalWorld, type PortalWorld } from './fixtures.ts';

let w: PortalWorld;
test.before(async () => {
  w = await startPortalWorld();
});
test.after.always(async () => w?.close());

for (const width of [1280, 360]) {
  test(`at ${width} px: Customer portal shows a link to copy that signs the customer in`, async (t) => {
    const customer = await insertCustomer(w.app.db, { name: `Linked ${width}` });
    const admin = await loginAs(w.app.baseUrl, w.app.db);
    const { page, close } = await newPage(w.browser, width);
    t.teardown(close);
    await signIn(page, w.app.baseUrl, admin.email, admin.password, `/admin/customers/${customer.id}`);
    const [button] = await page.$$('xpath/.//button[normalize-space()="Customer portal"]');
    await Promise.all([page.waitForNavigation(), button!.click()]);
    const url = await page.$eval('#portal code.id', (c) => c.textContent ?? '');
    t.regex(url, /^http:\/\/localhost:\d+\/portal\/s\/[A-Za-z0-9_-]{43}$/);
    t.false(await scrollsSideways(page));
    await page.screenshot({ path: `docs/screenshots/portal-console-link-${width}.png`, fullPage: true });
    await page.reload();
    t.is(await page.$('#portal code.id'), null, 'shown once');
    const audit = await w.app
      .db('audit_log')
      .where({ action: 'customer.portal_session_create', target_id: customer.id });
    t.is(audit.length, 1);
    t.is(audit[0].actor_email, admin.email);

    const visitor = await newPage(w.browser, width);
    t.teardown(visitor.close);
    await visitor.page.goto(`${w.app.baseUrl}${new URL(url).pathname}`);
    t.is(new URL(visitor.page.url()).pathname, '/portal');
    t.true((await bodyText(visitor.page)).includes(`Linked ${width}`));
  });
}
