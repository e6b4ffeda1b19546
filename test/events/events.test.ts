import test from 'ava';
import { recordEvents } from '../../src/events/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

test.serial('an event recorded in a rolled-back transaction does not exist', async (t) => {
  await t.throwsAsync(
    app.db.transaction(async (trx) => {
      await recordEvents(trx, [{ type: 'license.created', data: { licenseId: 'x' } }]);
      throw new Error('roll back');
    }),
  );
  t.is(Number((await app.db('events').count('* as n').first())?.n), 0);
});

test.serial('events are listed in order with the interface envelope, filtered by type and paged', async (t) => {
  const recorded = [];
  for (let i = 0; i < 5; i++)
    recorded.push(
      ...(await recordEvents(app.db, [{ type: i % 2 ? 'invoice.paid' : 'invoice.created', data: { n: i } }])),
    );
  const all = await request(app.baseUrl, '/api/billing/events', { cookie });
  t.is(all.status, 200);
  t.deepEqual(
    all.body.map((e: { id: string }) => e.id),
    recorded.map((e) => e.id),
  );
  const first = all.body[0];
  t.regex(first.id, /^evt_[A-Za-z0-9]+$/);
  t.is(first.type, 'invoice.created');
  t.regex(first.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  t.deepEqual(first.data, { n: 0 });

  const paid = await request(app.baseUrl, '/api/billing/events?type=invoice.paid', { cookie });
  t.deepEqual(
    paid.body.map((e: { data: { n: number } }) => e.data.n),
    [1, 3],
  );

  const page1 = await request(app.baseUrl, '/api/billing/events?limit=2', { cookie });
  t.is(page1.body.length, 2);
  const link = page1.headers.get('link') ?? '';
  t.regex(link, /rel="next"/);
  const next = /<([^>]+)>/.exec(link)![1]!;
  const page2 = await request(app.baseUrl, next, { cookie });
  t.deepEqual(
    page2.body.map((e: { id: string }) => e.id),
    recorded.slice(2, 4).map((e) => e.id),
  );
  const last = await request(
    app.baseUrl,
    `/api/billing/events?limit=2&startingAfter=${encodeURIComponent(recorded[3]!.id)}`,
    { cookie },
  );
  t.deepEqual(
    last.body.map((e: { id: string }) => e.id),
    [recorded[4]!.id],
  );
  t.is(last.headers.get('link'), null);
  t.is((await request(app.baseUrl, '/api/billing/events?startingAfter=not-an-id', { cookie })).status, 400);
});

test('an unknown type filter or limit out of range is a 400', async (t) => {
  t.is((await request(app.baseUrl, '/api/billing/events?type=nope', { cookie })).status, 400);
  t.is((await request(app.baseUrl, '/api/billing/events?limit=501', { cookie })).status, 400);
  t.is((await request(app.baseUrl, '/api/billing/events?limit=0', { cookie })).status, 400);
});

test('events need an admin session', async (t) => {
  t.is((await request(app.baseUrl, '/api/billing/events')).status, 401);
});
