/**
 * `/admin/settings` (console.md "operations"): every setting with its meaning, the edit form, API keys (shown once) and
 * revoke.
 */
import test from 'ava';
import { settingDefinitions } from '../../src/settings/definitions.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { auditMark, auditTableText, expectNoAudit, expectOneAudit } from '../audit/fixtures.ts';
import { rowsOf, startConsoleKit, submit, texts, inputValue, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit({ LICENSE_KEY_PREFIX: 'ENV' });
});
test.after.always(async () => kit?.close());

const settingsRows = async () => kit.app.db('settings').orderBy('key');

test.serial(
  'every setting is listed with its value and meaning; one overridden by the environment says so and is not in ' +
    'the form',
  async (t) => {
    const { page, close } = await kit.adminPage('/admin/settings', 360);
    t.is(await page.title(), 'Settings · Billing console');
    t.deepEqual(await texts(page, 'h1'), ['Settings']);
    t.is(await page.$eval('nav a[aria-current=page]', (a) => a.textContent), 'Settings');
    const rows = await rowsOf(page, '#settings');
    t.deepEqual(
      rows.map((r) => r[0]),
      Object.keys(settingDefinitions),
    );
    t.deepEqual(
      rows.find((r) => r[0] === 'billing.payment_terms_days'),
      ['billing.payment_terms_days', '14', 'Days from issue to due date.'],
    );
    t.deepEqual(rows.find((r) => r[0] === 'billing.dunning_schedule_days')?.[1], '1, 3, 5, 7');
    t.deepEqual(rows.find((r) => r[0] === 'licenses.key_prefix')?.[1], 'ENV set by LICENSE_KEY_PREFIX');
    t.is(await page.$('form[action="/admin/settings"] [name="licenses.key_prefix"]'), null);
    t.is(await inputValue(page, '[name="billing.payment_terms_days"]'), '14');
    t.is(await page.$eval('a[href="/admin/lifecycle"]', (a) => a.textContent), 'lifecycle sweep');
    t.deepEqual(await texts(page, '#api-keys .empty'), ['No API keys yet.']);
    t.false(await scrollsSideways(page));
    await close();
  },
);

test.serial('an edit saves the changed settings as PUT /api/settings would, with one audit row', async (t) => {
  const mark = await auditMark(kit.app.db);
  const { page, close } = await kit.adminPage('/admin/settings');
  await submit(page, '/admin/settings', {
    'billing.payment_terms_days': '30',
    'billing.dunning_schedule_days': '2, 4',
    'company.name': '<b>Acme</b>',
  });
  t.deepEqual(await texts(page, '.notice'), [
    'Saved: billing.payment_terms_days, billing.dunning_schedule_days, company.name.',
  ]);
  t.deepEqual(
    (await settingsRows()).map((r) => [r.key, r.value]),
    [
      ['billing.dunning_schedule_days', [2, 4]],
      ['billing.payment_terms_days', 30],
      ['company.name', '<b>Acme</b>'],
    ],
  );
  t.deepEqual((await rowsOf(page, '#settings')).find((r) => r[0] === 'company.name')?.[1], '<b>Acme</b>');
  await expectOneAudit(t, kit.app.db, mark, {
    action: 'setting.update',
    actor_email: kit.admin.email,
    target_id: 'billing.dunning_schedule_days,billing.payment_terms_days,company.name',
  });
  await close();
});

test.serial(
  "a refused edit shows the service's message beside the field, keeps what was typed and changes nothing",
  async (t) => {
    const before = await settingsRows();
    const mark = await auditMark(kit.app.db);
    const { page, close } = await kit.adminPage('/admin/settings');
    await submit(page, '/admin/settings', {
      'billing.payment_terms_days': '400',
      'company.email': 'billing@acme.test',
    });
    t.regex(
      (await texts(page, '.error'))[0]!,
      /Some fields need correcting: billing\.payment_terms_days: .*365.*invalid_request/,
    );
    t.is(await inputValue(page, '[name="billing.payment_terms_days"]'), '400');
    t.is(await inputValue(page, '[name="company.email"]'), 'billing@acme.test');
    t.is(await page.$eval('[name="billing.payment_terms_days"]', (i) => i.getAttribute('aria-invalid')), 'true');
    t.deepEqual(await settingsRows(), before);
    await expectNoAudit(t, kit.app.db, mark);
    await close();
  },
);

test.serial(
  'an API key is shown once after creation, never after a reload; it is listed by prefix and can be revoked',
  async (t) => {
    const customer = await insertCustomer(kit.app.db, { name: 'Keyed <Co>' });
    const { page, close } = await kit.adminPage('/admin/settings');
    await submit(page, '/admin/api-keys', { customerId: customer.id, name: 'Deploy bot' });
    const key = (await texts(page, '.reveal code.secret'))[0]!;
    t.regex(key, /^bsk_[A-Za-z0-9_-]{40,}$/);
    t.regex((await texts(page, 'p.notice'))[0]!, /^API key Deploy bot \(bsk_[\w-]{8}…\) created\.$/);
    const stored = await kit.app.db('api_keys').where({ customer_id: customer.id }).first();
    t.is(stored.prefix, key.slice(0, 12));
    // The key works on the v1 API.
    t.not(
      (await fetch(`${kit.app.baseUrl}/api/v1/licenses`, { headers: { authorization: `Bearer ${key}` } })).status,
      401,
    );

    await page.reload();
    t.false((await page.content()).includes(key), 'the key is gone after a reload');
    t.is(await page.$('.reveal'), null);
    const [row] = await rowsOf(page, '#api-keys');
    t.deepEqual([row![0], row![1], row![2], row![6]], ['Deploy bot', 'Keyed <Co>', stored.prefix, 'active']);

    const mark = await auditMark(kit.app.db);
    await Promise.all([
      page.waitForNavigation(),
      page.click(`form[action="/admin/api-keys/${stored.id}/revoke"] button`),
    ]);
    t.regex((await texts(page, 'p.notice'))[0]!, /^API key Deploy bot \(bsk_[\w-]{8}…\) revoked\.$/);
    t.truthy((await kit.app.db('api_keys').where({ id: stored.id }).first()).revoked_at);
    t.is((await rowsOf(page, '#api-keys'))[0]![6], 'revoked');
    t.is(await page.$(`form[action="/admin/api-keys/${stored.id}/revoke"]`), null);
    await expectOneAudit(t, kit.app.db, mark, {
      action: 'api_key.revoke',
      target_id: stored.id,
      actor_email: kit.admin.email,
    });
    t.is(
      (await fetch(`${kit.app.baseUrl}/api/v1/licenses`, { headers: { authorization: `Bearer ${key}` } })).status,
      401,
    );
    t.false((await page.content()).includes(key));
    t.false((await auditTableText(kit.app.db)).includes(key));
    await close();
  },
);

test.serial("a refused API key shows the service's message with what was typed, and creates nothing", async (t) => {
  const count = async () => Number((await kit.app.db('api_keys').count<{ n: string }[]>('* as n'))[0]!.n);
  const before = await count();
  const { page, close } = await kit.adminPage('/admin/settings');
  await submit(page, '/admin/api-keys', { customerId: '00000000-0000-4000-8000-000000000000', name: "Nobody's key" });
  t.regex(
    (await texts(page, '#api-keys .error'))[0]!,
    /Customer 00000000-0000-4000-8000-000000000000 does not exist.*customer_not_found/,
  );
  t.is(await inputValue(page, '#api-keys [name=name]'), "Nobody's key");
  t.true(await page.$eval('form[action="/admin/api-keys"]', (f) => (f.closest('details') as HTMLDetailsElement).open));
  t.is(await page.$('.reveal'), null);
  t.is(await count(), before);
  await close();
});
