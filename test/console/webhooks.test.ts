/** Console webhooks (console.md operations, issue 18): endpoints with health, the endpoint page and its actions. */
import test from 'ava';
import type { Page } from 'puppeteer';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { request } from '../helpers/http.ts';
import { makeInvoice, type Ctx } from '../payments/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';
import { standardWebhookPayload, startReceiver, xSignatureValid } from '../webhooks/receiver.ts';
import { rowsOf, startConsoleKit, submit, texts, inputValue, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
let api: Ctx;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let stopWorkers: () => Promise<void>;
/** `/fail` answers 500 until a test mends it. */
let failing = true;

test.before(async () => {
  // Two attempts in all, a fifth of a second apart: a failing delivery is `failed` within a second.
  kit = await startConsoleKit({ WEBHOOK_RETRY_SCHEDULE_SECONDS: '0.2' });
  api = { baseUrl: kit.app.baseUrl, cookie: (await loginAsAdmin(kit.app.baseUrl, kit.app.db)).cookie, db: kit.app.db };
  receiver = await startReceiver({
    '/fail': (_r, res) =>
      failing
        ? res.writeHead(500, { 'content-type': 'text/plain' }).end('boom: the receiver is down')
        : res.writeHead(200).end('mended'),
  });
  stopWorkers = await registerWorkers(kit.app.boss, kit.app.deps, ['webhooks'], jobHandlers);
});
test.after.always(async () => {
  await stopWorkers?.();
  await receiver?.close();
  await kit?.close();
});

const db = () => kit.app.db;
const base = '/api/billing/webhooks/endpoints';
const endpointRow = (id: string) => db()('webhook_endpoints').where({ id }).first();
const count = async (table: string) => Number((await db()(table).count<{ n: string }[]>('* as n'))[0]!.n);

async function apiEndpoint(path: string, events: string[]): Promise<{ id: string; secret: string }> {
  const res = await request(api.baseUrl, base, { cookie: api.cookie, body: { url: receiver.url(path), events } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body;
}

/** Waits until none of the endpoint's deliveries is pending. */
const settled = (endpointId: string) =>
  waitFor(
    () =>
      db()('webhook_deliveries').where({ endpoint_id: endpointId, status: 'pending' }).count<{ n: string }[]>('* as n'),
    (r) => Number(r[0]!.n) === 0,
  );

/** Ticks exactly these event checkboxes of the form posting to `action`. */
async function tick(page: Page, action: string, events: string[]): Promise<void> {
  await page.$$eval(
    `form[action="${action}"] input[type=checkbox]`,
    (boxes, wanted) => {
      for (const box of boxes as HTMLInputElement[]) box.checked = wanted.includes(box.value);
    },
    events,
  );
}

// Serial: the first test needs no endpoint yet, and the later ones use what the earlier made.
test.serial('an empty list says so, links the provider events and offers the create form', async (t) => {
  const { page, close } = await kit.adminPage('/admin/webhooks');
  t.is(await page.title(), 'Webhooks · Billing console');
  t.deepEqual(await texts(page, 'h1'), ['Webhooks']);
  t.deepEqual(await texts(page, '.empty'), ['No webhook endpoints yet.']);
  t.truthy(await page.$('a[href="/admin/provider-events"]'));
  t.is(await page.$eval('nav a[aria-current=page]', (a) => a.textContent), 'Webhooks');
  await close();
});

test.serial(
  'creating an endpoint shows its secret once; a refused create shows the service message and keeps what was typed',
  async (t) => {
    const { page, close } = await kit.adminPage('/admin/webhooks');
    await tick(page, '/admin/webhooks', ['invoice.created', 'invoice.paid']);
    await submit(page, '/admin/webhooks', { url: receiver.url('/created') });
    const row = await db()('webhook_endpoints')
      .where({ url: receiver.url('/created') })
      .first();
    t.deepEqual(row.events, ['invoice.created', 'invoice.paid']);
    t.is(new URL(page.url()).pathname, `/admin/webhooks/${row.id}`);
    const [notice] = await texts(page, '.notice');
    t.regex(notice ?? '', /Endpoint created/);
    t.true((notice ?? '').includes(row.secret), 'the secret is shown after the create');
    await page.reload();
    t.false((await page.content()).includes(row.secret), 'and never again');

    const before = await count('webhook_endpoints');
    await page.goto(`${kit.app.baseUrl}/admin/webhooks`);
    await tick(page, '/admin/webhooks', ['payment.failed']);
    await submit(page, '/admin/webhooks', { url: 'ftp://files.example.test/hook' });
    const [alert] = await texts(page, '[role=alert]');
    t.regex(alert ?? '', /url: must use http or https/);
    t.regex(alert ?? '', /invalid_request/);
    t.is(await inputValue(page, 'form[action="/admin/webhooks"] [name=url]'), 'ftp://files.example.test/hook');
    t.deepEqual(
      await page.$$eval('form[action="/admin/webhooks"] input:checked', (els) =>
        els.map((e) => (e as HTMLInputElement).value),
      ),
      ['payment.failed'],
    );
    await tick(page, '/admin/webhooks', []);
    await submit(page, '/admin/webhooks', { url: receiver.url('/none') });
    t.regex((await texts(page, '[role=alert]'))[0] ?? '', /events: must name at least one event type/);
    t.is(await count('webhook_endpoints'), before);
    await close();
  },
);

test.serial("the list shows each endpoint's health over the last 24 hours, computed from its deliveries", async (t) => {
  const ok = await apiEndpoint('/ok', ['invoice.created']);
  const bad = await apiEndpoint('/fail', ['invoice.created']);
  await makeInvoice(api);
  await makeInvoice(api);
  await settled(ok.id);
  await settled(bad.id);
  const { page, close } = await kit.adminPage('/admin/webhooks');
  t.deepEqual(await texts(page, 'thead th'), ['URL', 'Events', 'Status', 'Last 24 h', 'Last failure', 'Created']);
  const rows = await rowsOf(page, '');
  t.deepEqual(rows[0]!.slice(0, 4), [
    receiver.url('/fail'),
    'invoice.created',
    'enabled',
    '0 delivered · 2 failed · 0 pending · 0% delivered',
  ]);
  t.regex(rows[0]![4]!, /UTC: HTTP 500$/);
  t.deepEqual(rows[1]!.slice(0, 5), [
    receiver.url('/ok'),
    'invoice.created',
    'enabled',
    '2 delivered · 0 failed · 0 pending · 100% delivered',
    'none',
  ]);
  t.is(await page.$eval('tbody tr a', (a) => a.getAttribute('href')), `/admin/webhooks/${bad.id}`);
  await close();
});

test.serial(
  "an endpoint's page lists its deliveries newest first with every attempt, filters the failed ones, and pages",
  async (t) => {
    const bad = await db()('webhook_endpoints')
      .where({ url: receiver.url('/fail') })
      .first();
    const { page, close } = await kit.adminPage(`/admin/webhooks/${bad.id}?status=failed`);
    t.deepEqual(await texts(page, 'h1'), [receiver.url('/fail')]);
    t.is(await inputValue(page, '#status'), 'failed');
    const rows = await rowsOf(page, '#deliveries');
    t.is(rows.length, 2);
    t.true(rows.every((r) => r[1]!.startsWith('invoice.created') && r[2] === 'failed'));
    const attempts = await texts(page, '#deliveries tbody tr:first-child ol.attempts li');
    t.is(attempts.length, 2);
    for (const a of attempts) t.regex(a, /^HTTP 500 · \d+ ms · .+ UTC · boom: the receiver is down$/);
    const stored = await db()('webhook_deliveries')
      .where({ endpoint_id: bad.id })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .pluck('event_id');
    t.deepEqual(
      rows.map((r) => r[1]!.split(' ').at(-1)),
      stored,
    );

    await page.goto(`${kit.app.baseUrl}/admin/webhooks/${bad.id}?status=delivered`);
    t.deepEqual(await texts(page, '#deliveries .empty'), ['No delivered deliveries.']);

    // 55 more, parked (not due), on an endpoint of their own: two pages, the filter kept.
    const parked = await apiEndpoint('/parked', ['license.expired']);
    const at = Date.parse('2026-01-01T00:00:00Z');
    const events = Array.from({ length: 55 }, (_, i) => ({
      id: `evt_page_${String(i).padStart(2, '0')}`,
      type: 'license.expired',
      data: {},
      created_at: new Date(at + i * 1000),
    }));
    await db()('events').insert(events);
    await db()('webhook_deliveries').insert(
      events.map((e, i) => ({
        endpoint_id: parked.id,
        event_id: e.id,
        status: 'failed',
        next_attempt_at: null,
        created_at: new Date(at + i * 1000),
      })),
    );
    await page.goto(`${kit.app.baseUrl}/admin/webhooks/${parked.id}?status=failed`);
    let ids = (await rowsOf(page, '#deliveries')).map((r) => r[1]!.split(' ').at(-1));
    t.is(ids.length, 50);
    t.is(ids[0], 'evt_page_54');
    const next = new URL(await page.$eval('#deliveries a[rel=next]', (a) => a.getAttribute('href')!), kit.app.baseUrl);
    t.is(next.searchParams.get('status'), 'failed');
    await Promise.all([page.waitForNavigation(), page.click('#deliveries a[rel=next]')]);
    ids = (await rowsOf(page, '#deliveries')).map((r) => r[1]!.split(' ').at(-1));
    t.deepEqual(ids, ['evt_page_04', 'evt_page_03', 'evt_page_02', 'evt_page_01', 'evt_page_00']);
    t.deepEqual(await texts(page, '#deliveries td:nth-child(5)'), Array(5).fill('not attempted yet'));
    await close();
  },
);

test.serial(
  'rotating the secret shows the new one once; a redelivery then reaches the receiver signed with it (and the old ' +
    'one, in its grace period)',
  async (t) => {
    const bad = await db()('webhook_endpoints')
      .where({ url: receiver.url('/fail') })
      .first();
    const oldSecret = bad.secret as string;
    const { page, close } = await kit.adminPage(`/admin/webhooks/${bad.id}`);
    await submit(page, `/admin/webhooks/${bad.id}/rotate-secret`, {});
    const rotated = await endpointRow(bad.id);
    t.not(rotated.secret, oldSecret);
    t.regex(rotated.secret, /^whsec_/);
    const [notice] = await texts(page, '.notice');
    t.true((notice ?? '').includes(rotated.secret), notice);
    t.false((await page.content()).includes(oldSecret));
    t.regex(
      (await texts(page, 'dl.props dd')).join('|'),
      /\|\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\|\d{4}-/,
      "rotated at and the old secret's end are shown",
    );
    await page.reload();
    t.false((await page.content()).includes(rotated.secret), 'the new secret is gone after a reload');
    t.deepEqual(await texts(page, '.notice'), []);

    failing = false;
    const delivery = await db()('webhook_deliveries')
      .where({ endpoint_id: bad.id })
      .orderBy('created_at', 'desc')
      .first();
    const heard = receiver.at('/fail').length;
    await submit(page, `/admin/webhooks/deliveries/${delivery.id}/redeliver`, {});
    t.is(new URL(page.url()).pathname, `/admin/webhooks/${bad.id}`);
    t.regex((await texts(page, '.notice'))[0] ?? '', /queued again/);
    const done = await waitFor(
      () => db()('webhook_deliveries').where({ id: delivery.id }).first(),
      (d) => d.status === 'delivered',
    );
    t.is(done.status, 'delivered');
    const request = receiver
      .at('/fail')
      .slice(heard)
      .find((r) => r.headers['webhook-id'] === delivery.event_id)!;
    t.truthy(request, 'the receiver got the redelivery');
    t.true(xSignatureValid(rotated.secret, request), "X-Signature is the new secret's");
    t.false(xSignatureValid(oldSecret, request));
    t.like(standardWebhookPayload(rotated.secret, request), { id: delivery.event_id });
    t.like(
      standardWebhookPayload(oldSecret, request),
      { id: delivery.event_id },
      'the old secret still verifies during its grace period',
    );
    await page.reload();
    const attempts = await texts(
      page,
      `#deliveries tbody tr:has(form[action="/admin/webhooks/deliveries/${delivery.id}/redeliver"]) ol.attempts li`,
    );
    t.is(attempts.length, 3);
    t.regex(attempts[2]!, /^HTTP 200 · \d+ ms · .+ UTC · mended$/);
    await close();
  },
);

test.serial(
  'editing url and events, disabling and enabling go through the API service; a refused edit keeps what was typed ' +
    'and changes nothing',
  async (t) => {
    const endpoint = await apiEndpoint('/editable', ['invoice.paid']);
    const action = `/admin/webhooks/${endpoint.id}`;
    const { page, close } = await kit.adminPage(action);
    t.is(await inputValue(page, `form[action="${action}"] [name=url]`), receiver.url('/editable'));
    t.deepEqual(
      await page.$$eval(`form[action="${action}"] input:checked`, (els) =>
        els.map((e) => (e as HTMLInputElement).value),
      ),
      ['invoice.paid'],
    );
    await tick(page, action, ['*']);
    await submit(page, action, { url: receiver.url('/edited') });
    t.regex((await texts(page, '.notice'))[0] ?? '', /Endpoint updated/);
    t.like(await endpointRow(endpoint.id), { url: receiver.url('/edited'), events: ['*'], secret: endpoint.secret });

    await submit(page, `${action}/disable`, {});
    // Disabling asks first (issue 34), and acts on the confirmation.
    t.regex((await texts(page, '.confirm'))[0] ?? '', /Please confirm\. A disabled endpoint is sent no events/);
    t.true((await endpointRow(endpoint.id)).enabled);
    await submit(page, `${action}/disable`, {});
    t.regex((await texts(page, '.notice'))[0] ?? '', /Endpoint disabled/);
    t.false((await endpointRow(endpoint.id)).enabled);
    t.is(await page.$(`form[action="${action}/disable"]`), null);
    await submit(page, `${action}/enable`, {});
    t.regex((await texts(page, '.notice'))[0] ?? '', /Endpoint enabled/);
    t.true((await endpointRow(endpoint.id)).enabled);

    const before = await endpointRow(endpoint.id);
    await tick(page, action, []);
    await submit(page, action, { url: 'http://typed.example.test/hook' });
    t.regex((await texts(page, '[role=alert]'))[0] ?? '', /events: must name at least one event type/);
    t.is(await inputValue(page, `form[action="${action}"] [name=url]`), 'http://typed.example.test/hook');
    t.true(await page.$eval(`form[action="${action}"]`, (f) => f.closest('details')!.open));
    await tick(page, action, ['invoice.paid']);
    await submit(page, action, { url: 'not a url' });
    t.regex((await texts(page, '[role=alert]'))[0] ?? '', /url: must be an absolute http\(s\) URL/);
    t.deepEqual(await endpointRow(endpoint.id), before);

    await submit(page, `${action}/delete`, {});
    t.is(new URL(page.url()).pathname, '/admin/webhooks');
    t.regex((await texts(page, '.notice'))[0] ?? '', /deleted/);
    t.is(await endpointRow(endpoint.id), undefined);
    await close();
  },
);

test.serial(
  'an unknown endpoint or delivery is a 404; a redelivery of a deleted delivery is refused with the service message',
  async (t) => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      const res = await fetch(`${kit.app.baseUrl}/admin/webhooks/${id}`, { headers: { cookie: api.cookie } });
      t.is(res.status, 404, id);
      t.regex(await res.text(), /Webhook endpoint not found/);
    }
    const endpoint = await apiEndpoint('/short-lived', ['invoice.created']);
    await makeInvoice(api);
    await settled(endpoint.id);
    const delivery = await db()('webhook_deliveries').where({ endpoint_id: endpoint.id }).first();
    const { page, close } = await kit.adminPage(`/admin/webhooks/${endpoint.id}`);
    await request(api.baseUrl, `${base}/${endpoint.id}`, { cookie: api.cookie, method: 'DELETE' });
    await submit(page, `/admin/webhooks/deliveries/${delivery.id}/redeliver`, {});
    t.regex((await texts(page, '[role=alert]'))[0] ?? '', /Webhook delivery not found/);
    await close();
  },
);

test.serial('list and endpoint page read at 360 px without sideways scrolling, with one h1', async (t) => {
  const bad = await db()('webhook_endpoints')
    .where({ url: receiver.url('/fail') })
    .first();
  for (const path of ['/admin/webhooks', `/admin/webhooks/${bad.id}`]) {
    const { page, close } = await kit.adminPage(path, 360);
    t.is((await page.$$('h1')).length, 1, path);
    t.false(await scrollsSideways(page), path);
    await page.$$eval('details', (ds) => {
      for (const d of ds) d.setAttribute('open', '');
    });
    t.false(await scrollsSideways(page), `${path} with its forms open`);
    await close();
  }
});
