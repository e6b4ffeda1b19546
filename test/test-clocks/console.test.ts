/**
 * TC-6 in Chromium: the Test clocks page creates a clock, advances it with a date field (the advance job runs in
 * this process's lifecycle worker), refuses a backward move beside the field and deletes only once confirmed; the
 * customer's page names its clock; the Settings page switches test clocks off. At 1280 and 360 px without sideways
 * scrolling.
 */
import test from 'ava';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { rowsOf, startConsoleKit, submit, texts, type ConsoleKit } from '../console/fixtures.ts';
import { clockCustomer, waitForClock } from './fixtures.ts';

let kit: ConsoleKit;
let cookie: string;
test.before(async () => {
  kit = await startConsoleKit();
  ({ cookie } = await loginAsAdmin(kit.app.baseUrl, kit.app.db));
  await registerWorkers(kit.app.boss, kit.app.deps, ['lifecycle'], jobHandlers);
});
test.after.always(async () => kit?.close());

const PATH = '/admin/test-clocks';

test.serial(
  'create, advance with a date, refusal beside the field, the customer page, delete asked first',
  async (t) => {
    const { page, close } = await kit.adminPage('/admin/settings');
    await Promise.all([page.waitForNavigation(), page.click('main a[href="/admin/test-clocks"]')]);
    t.deepEqual(await texts(page, 'h1'), ['Test clocks']);
    await submit(page, PATH, { name: 'Trial walkthrough', frozenTime: '2026-01-01' });
    t.regex((await texts(page, '.notice'))[0] ?? '', /Test clock Trial walkthrough created/);
    const clock = await kit.app.db('test_clocks').where({ name: 'Trial walkthrough' }).first();
    const customer = await clockCustomer(kit.app, cookie, clock.id, 'pm_card_visa');

    await submit(page, `${PATH}/${clock.id}/advance`, { frozenTime: '2025-12-01' });
    t.regex((await texts(page, '.field-error')).join(' '), /must be after the clock's time/);
    await submit(page, `${PATH}/${clock.id}/advance`, { frozenTime: '2026-02-15' });
    t.regex((await texts(page, '.notice'))[0] ?? '', /is advancing/);
    await waitForClock(kit.app, cookie, clock.id);
    await page.reload();
    const [row] = await rowsOf(page, '');
    t.is(row![0], 'Trial walkthrough');
    t.regex(row![1]!, /2026/);
    t.is(row![2], 'ready');
    t.is(row![3], '1', 'one customer');
    t.false(await scrollsSideways(page));
    await page.screenshot({ path: 'docs/screenshots/test-clocks-1280.png', fullPage: true });

    const narrow = await kit.adminPage(PATH, 360);
    t.false(await scrollsSideways(narrow.page));
    await narrow.page.screenshot({ path: 'docs/screenshots/test-clocks-360.png', fullPage: true });
    await narrow.page.goto(`${kit.app.baseUrl}/admin/customers/${customer.id}`);
    t.regex((await texts(narrow.page, '.test-clock'))[0] ?? '', /On test clock Trial walkthrough/);
    t.false(await scrollsSideways(narrow.page));
    await narrow.page.screenshot({ path: 'docs/screenshots/test-clocks-customer-360.png', fullPage: true });
    await narrow.close();

    await submit(page, `${PATH}/${clock.id}/delete`, {});
    t.regex((await texts(page, '.confirm'))[0] ?? '', /deletes its customers/);
    t.truthy(await kit.app.db('test_clocks').where({ id: clock.id }).first(), 'not deleted before confirming');
    await Promise.all([page.waitForNavigation(), page.click(`form[action="${PATH}/${clock.id}/delete"] button`)]);
    t.regex((await texts(page, '.notice'))[0] ?? '', /deleted with its customers/);
    t.falsy(await kit.app.db('test_clocks').where({ id: clock.id }).first());
    t.falsy(await kit.app.db('customers').where({ id: customer.id }).first());
    await close();
  },
);

test.serial('the Settings page switches test clocks off; the page then offers no creation', async (t) => {
  const { page, close } = await kit.adminPage('/admin/settings');
  t.true((await texts(page, '#settings td')).some((cell) => cell === 'billing.test_clocks_enabled'));
  await submit(page, '/admin/settings', { 'billing.test_clocks_enabled': 'false' });
  t.regex((await texts(page, '.notice'))[0] ?? '', /Saved: billing.test_clocks_enabled/);
  await page.goto(`${kit.app.baseUrl}${PATH}`);
  t.regex((await texts(page, 'main .notice')).join(' '), /switched off/);
  t.is(await page.$(`form[action="${PATH}"]`), null);
  await close();
});
