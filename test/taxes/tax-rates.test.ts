/** T-1: tax rates over the admin API: created, listed, renamed and archived; their terms never change. */
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { adminApi, type Api } from '../subscriptions/fixtures.ts';

let app: TestApp;
let api: Api;
test.before(async () => {
  app = await startTestApp();
  const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
  api = adminApi(app, cookie);
});
test.after.always(async () => app?.close());

const count = async () => Number((await app.db('tax_rates').count({ n: '*' }))[0]!.n);

test.serial(
  'POST creates a rate (201): percentage as written, exclusive by default, active; GET reads and lists it',
  async (t) => {
    const res = await api('/api/billing/tax-rates', {
      body: { name: 'VAT DE', percentage: '19.00', country: 'DE', description: 'German VAT' },
    });
    t.is(res.status, 201, res.text);
    t.like(res.body, {
      name: 'VAT DE',
      percentage: '19',
      inclusive: false,
      country: 'DE',
      description: 'German VAT',
      active: true,
    });
    t.regex(res.body.createdAt, /Z$/);
    const inclusive = await api('/api/billing/tax-rates', {
      body: { name: 'GST AU', percentage: '10', inclusive: true },
    });
    t.like(inclusive.body, { percentage: '10', inclusive: true, country: null, description: null });
    t.deepEqual((await api(`/api/billing/tax-rates/${res.body.id}`)).body, res.body);
    const list = await api('/api/billing/tax-rates');
    t.deepEqual(
      list.body.map((r: { id: string }) => r.id),
      [res.body.id, inclusive.body.id],
    );
    const audit = await app.db('audit_log').where({ target_id: res.body.id, action: 'tax_rate.create' });
    t.is(audit.length, 1);
  },
);

test.serial('bad rates are refused with 400 naming the field, and nothing is stored', async (t) => {
  const before = await count();
  const cases: [Record<string, unknown>, string][] = [
    [{ name: 'Too high', percentage: '100.5' }, 'percentage'],
    [{ name: 'Negative', percentage: '-1' }, 'percentage'],
    [{ name: 'Too fine', percentage: '19.12345' }, 'percentage'],
    [{ name: 'Number', percentage: 19 }, 'percentage'],
    [{ name: 'Lower country', percentage: '19', country: 'de' }, 'country'],
    [{ name: '', percentage: '19' }, 'name'],
    [{ percentage: '19' }, 'name'],
    [{ name: 'Inclusive text', percentage: '19', inclusive: 'yes' }, 'inclusive'],
  ];
  for (const [body, field] of cases) {
    const res = await api('/api/billing/tax-rates', { body });
    t.is(res.status, 400, JSON.stringify(body));
    t.true(
      res.body.error.details.some((d: { path: string }) => d.path === field),
      `${JSON.stringify(body)}: ${res.text}`,
    );
  }
  t.is(await count(), before);
});

test.serial(
  'PUT renames, describes, archives; a changed percentage or inclusive is 400, changing nothing; the same one is ok',
  async (t) => {
    const rate = (await api('/api/billing/tax-rates', { body: { name: 'VAT FR', percentage: '20' } })).body;
    const renamed = await api(`/api/billing/tax-rates/${rate.id}`, {
      method: 'PUT',
      body: { name: 'VAT FR (standard)', description: 'Taux normal', active: false },
    });
    t.is(renamed.status, 200, renamed.text);
    t.like(renamed.body, { name: 'VAT FR (standard)', description: 'Taux normal', active: false, percentage: '20' });
    for (const body of [
      { percentage: '5.5' },
      { inclusive: true },
      { name: 'x', percentage: '20.01' },
      { percentage: 20 },
    ]) {
      const res = await api(`/api/billing/tax-rates/${rate.id}`, { method: 'PUT', body });
      t.is(res.status, 400, JSON.stringify(body));
      t.regex(res.text, /create a new tax rate/);
    }
    t.deepEqual((await api(`/api/billing/tax-rates/${rate.id}`)).body, renamed.body);
    // What was read, sent back with a new name: the terms as they are are no change (T-1 refuses a changed one).
    const { id, createdAt, ...asRead } = renamed.body;
    const roundTrip = await api(`/api/billing/tax-rates/${rate.id}`, {
      method: 'PUT',
      body: { name: asRead.name, description: asRead.description, active: false, percentage: '20.0', inclusive: false },
    });
    t.is(roundTrip.status, 200, roundTrip.text);
    t.like(roundTrip.body, { id, createdAt, active: false, percentage: '20' });
    const active = await api('/api/billing/tax-rates?active=false');
    t.true(active.body.some((r: { id: string }) => r.id === rate.id));
    t.false((await api('/api/billing/tax-rates?active=true')).body.some((r: { id: string }) => r.id === rate.id));
  },
);

test.serial('rates are never deleted (405 with Allow), and an unknown id is 404', async (t) => {
  const rate = (await api('/api/billing/tax-rates', { body: { name: 'Keep', percentage: '7' } })).body;
  const del = await api(`/api/billing/tax-rates/${rate.id}`, { method: 'DELETE' });
  t.is(del.status, 405);
  t.regex(del.headers.get('allow') ?? '', /GET/);
  const missing = await api('/api/billing/tax-rates/00000000-0000-4000-8000-000000000000');
  t.is(missing.status, 404);
});
