/** GET /api/search/customers (D-23): word-prefix full-text search over name, email and company on the GIN index. */
import test from 'ava';
import { customerSearchQuery } from '../../src/customers/repo.ts';
import { prefixTsquery } from '../../src/customers/search-query.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { createCustomer } from './fixtures.ts';

let app: TestApp;
let cookie: string;
const ids: Record<string, string> = {};
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  const people = {
    acme: { name: 'Acme Corp', email: 'accounts@acme-corp.example' },
    john: { name: 'Zed Person', email: 'john@x.io' },
    initech: { name: 'Bob Porter', email: 'bob@porter.example', company: 'Initech Systems' },
    umbrella: { name: 'Umbrella Ltd', email: 'it@umbrella.example' },
    aardvark: { name: 'Aardvark', email: 'hello@aardvark.example', company: 'Umbrella Holdings' },
    muller: { name: 'Müller GmbH', email: 'info@mueller.example' },
  };
  for (const [key, body] of Object.entries(people)) ids[key] = (await createCustomer(app.baseUrl, cookie, body)).id;
  // Enough rows sharing a word to pass the 50-result cap.
  await app
    .db('customers')
    .insert(Array.from({ length: 55 }, (_, i) => ({ name: `Bulkrow ${i}`, email: `bulk${i}@bulk.example` })));
});
test.after.always(async () => app?.close());

const search = (q: string) => request(app.baseUrl, `/api/search/customers?q=${encodeURIComponent(q)}`, { cookie });
const found = async (q: string) => {
  const res = await search(q);
  if (res.status !== 200) throw new Error(`search ${q}: ${res.status} ${res.text}`);
  return (res.body as { id: string }[]).map((c) => c.id);
};

test('a word prefix of the name matches, in any case: "acm" finds "Acme Corp"', async (t) => {
  t.deepEqual(await found('acm'), [ids.acme]);
  t.deepEqual(await found('ACM'), [ids.acme]);
  t.deepEqual(await found('corp acme'), [ids.acme]);
  const [first] = (await search('acme')).body;
  t.like(first, { id: ids.acme, name: 'Acme Corp', products: [], creditBalance: '0.00' });
});

test('a prefix of an email matches: "jo" finds "john@x.io"', async (t) => {
  t.true((await found('jo')).includes(ids.john!));
  t.deepEqual(await found('john@x.io'), [ids.john]);
  t.deepEqual(await found('x.io'), [ids.john]);
});

test('a prefix of the company matches', async (t) => {
  t.deepEqual(await found('initech'), [ids.initech]);
  t.deepEqual(await found('Init sys'), [ids.initech]);
});

test('every word must match (AND), and no match is an empty array', async (t) => {
  t.deepEqual(await found('acme initech'), []);
  t.deepEqual(await found('zzzqqq'), []);
});

test('results are ranked: a name match comes before a company match', async (t) => {
  t.deepEqual(await found('umbrella'), [ids.umbrella, ids.aardvark]);
});

test('letters of any script are words', async (t) => {
  t.deepEqual(await found('mül'), [ids.muller]);
  t.deepEqual(await found('gmbh'), [ids.muller]);
});

test('at most 50 results', async (t) => {
  t.is((await found('bulkrow')).length, 50);
});

test('SQL-looking and tsquery-operator input never errors and reaches no syntax', async (t) => {
  for (const q of [
    "'; drop table customers; --",
    'a & | !',
    "acme' | 'x",
    'acme:* | !x',
    '((acme',
    '\\',
    "'",
    '<->',
    '!!!',
    '&',
    'acme <-> corp',
    '\u0000acme',
    '％＆',
  ]) {
    const res = await search(q);
    t.is(res.status, 200, q);
    t.true(Array.isArray(res.body), q);
  }
  t.deepEqual(await found("acme' | 'x"), []);
  t.deepEqual(await found('((acme'), [ids.acme]);
  t.deepEqual(await found('!!!'), []);
  t.true(Number((await app.db('customers').count('* as n').first())?.n) > 0);
});

test('q missing, empty or blank is 400 invalid_request naming query.q', async (t) => {
  for (const path of [
    '/api/search/customers',
    '/api/search/customers?q=',
    '/api/search/customers?q=%20%20',
    '/api/search/customers?q=a&q=b',
  ]) {
    const res = await request(app.baseUrl, path, { cookie });
    t.is(res.status, 400, path);
    t.is(res.body.error.code, 'invalid_request');
    t.deepEqual(
      res.body.error.details.map((d: { path: string }) => d.path),
      ['query.q'],
      path,
    );
  }
  t.is((await search('x'.repeat(201))).status, 400);
});

test('the search uses the GIN index on customers.search when sequential scans are off', async (t) => {
  const { sql, bindings } = customerSearchQuery(app.db, prefixTsquery('acm corp')!).toSQL();
  const plan = await app.db.transaction(async (trx) => {
    await trx.raw('set local enable_seqscan = off');
    const result = await trx.raw<{ rows: { 'QUERY PLAN': string }[] }>(`explain ${sql}`, bindings);
    return result.rows.map((r) => r['QUERY PLAN']).join('\n');
  });
  t.regex(plan, /Index Scan (on|using) customers_search/, plan);
});

test('prefixTsquery keeps only letter and digit runs', (t) => {
  t.is(prefixTsquery("O'Brien & co | !x"), 'O:* & Brien:* & co:* & x:*');
  t.is(prefixTsquery('john@x.io'), 'john:* & x:* & io:*');
  t.is(prefixTsquery(' !! '), undefined);
  t.is(prefixTsquery('a a A'), 'a:* & A:*');
});
