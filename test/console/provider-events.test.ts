/**
 * Console provider events (console.md operations, issue 18): the list with failures and filters, replay, the detail
 * page.
 */
import test from 'ava';
import { applyProviderEventJob } from '../../src/provider-events/apply-event.job.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { postProviderA, PROVIDER_SECRETS, providerAEvent } from '../helpers/provider-events.ts';
import { waitFor, waitForJobsFinished } from '../helpers/wait.ts';
import { rowsOf, startConsoleKit, submit, texts, inputValue, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
let cookie: string;
test.before(async () => {
  kit = await startConsoleKit(PROVIDER_SECRETS);
  cookie = (await loginAsAdmin(kit.app.baseUrl, kit.app.db)).cookie;
  await registerWorkers(kit.app.boss, kit.app.deps, ['provider_events'], jobHandlers);
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;
type Stored = { id: string; status: string; failure_reason: string | null };
const stored = (eventId: string) => (): Promise<Stored | undefined> =>
  db()('provider_events').where({ event_id: eventId }).first();
const settledRow = (eventId: string) => waitFor(stored(eventId), (r) => r !== undefined && r.status !== 'received');

test.serial('an empty list says so', async (t) => {
  const { page, close } = await kit.adminPage('/admin/provider-events');
  t.is(await page.title(), 'Provider events · Billing console');
  t.deepEqual(await texts(page, 'h1'), ['Provider events']);
  t.deepEqual(await texts(page, '.empty'), ['No provider events yet.']);
  t.is(await page.$eval('nav a[aria-current=page]', (a) => a.textContent), 'Webhooks');
  await close();
});

test.serial(
  'a failed event is listed with its error; replayed from the console (twice) after its cause is fixed, it ' +
    'settles the invoice once',
  async (t) => {
    // A payment for an invoice that does not exist yet (imported later): failed, with the reason.
    const invoiceId = '00000000-0000-4000-8000-0000000c0501';
    const event = providerAEvent.invoicePaid(invoiceId, 2500, 'USD');
    t.is((await postProviderA(kit.app.baseUrl, event)).status, 200);
    const failed = (await settledRow(event.id))!;
    t.is(failed.status, 'failed');

    const { page, close } = await kit.adminPage('/admin/provider-events?status=failed');
    t.is(await inputValue(page, '#status'), 'failed');
    t.deepEqual(await texts(page, 'thead th'), [
      'Received',
      'Provider',
      'Type',
      'Status',
      'Attempts',
      'Error',
      'Action',
    ]);
    const [row] = await rowsOf(page, '');
    t.deepEqual(row!.slice(1, 5), ['provider_a', 'invoice.paid', 'failed', '1']);
    t.regex(row![5]!, /does not exist/);
    const replay = `/admin/provider-events/${failed.id}/replay`;
    t.truthy(await page.$(`form[action="${replay}"]`));

    const customer = await insertCustomer(db());
    await db()('invoices').insert({
      id: invoiceId,
      customer_id: customer.id,
      invoice_number: 'INV-IMPORT-C1',
      status: 'issued',
      currency: 'USD',
      tax_rate: '0',
      subtotal: '25',
      tax_amount: '0',
      total: '25',
      issued_at: new Date(),
    });

    // Two admins (two pages) replay the same failed event.
    const second = await kit.adminPage('/admin/provider-events?status=failed');
    await submit(page, replay, {});
    t.is(new URL(page.url()).pathname, `/admin/provider-events/${failed.id}`);
    t.regex((await texts(page, '.notice'))[0] ?? '', /queued again|already processed/);
    await submit(second.page, replay, {});
    t.regex((await texts(second.page, '.notice'))[0] ?? '', /queued again|already processed/);
    await second.close();

    const done = await waitFor(stored(event.id), (r) => r?.status === 'processed');
    t.is(done!.status, 'processed');
    // Each replay queued the event again: once both jobs ran, a second payment would be there.
    await waitForJobsFinished(db(), applyProviderEventJob.name, { eventId: failed.id });
    t.is(
      (await db()('payments').where({ invoice_id: invoiceId })).length,
      1,
      'one payment however often it was replayed',
    );
    t.is((await db()('invoices').where({ id: invoiceId }).first()).status, 'paid');

    await page.reload();
    t.deepEqual((await texts(page, 'dl.props dd')).slice(0, 2), ['processed', '—']);
    t.is(await page.$(`form[action="${replay}"]`), null, 'an applied event offers no replay');
    t.true((await texts(page, 'pre.payload'))[0]!.includes(invoiceId));
    t.true((await rowsOf(page, '[aria-labelledby=audit-heading]')).some((r) => r[2] === 'provider_event.replay'));
    await close();
  },
);

test.serial('filters are in the URL and survive paging; markup in an event shows as text', async (t) => {
  const at = Date.parse('2026-02-01T00:00:00Z');
  await db()('provider_events').insert(
    Array.from({ length: 55 }, (_, i) => ({
      provider: 'provider_c',
      event_id: `page-${i}`,
      event_type: 'order_created',
      payload: {},
      status: 'failed',
      failure_reason: `reason ${i}`,
      attempts: 1,
      created_at: new Date(at + i * 1000),
    })),
  );
  await db()('provider_events').insert({
    provider: 'provider_c',
    event_id: 'other',
    event_type: 'order_created',
    payload: {},
    status: 'ignored',
    created_at: new Date(at),
  });
  const { page, dialogs, close } = await kit.adminPage('/admin/provider-events?status=failed&provider=provider_c');
  let reasons = (await rowsOf(page, '')).map((r) => r[5]);
  t.is(reasons.length, 50);
  t.is(reasons[0], 'reason 54');
  const next = new URL(await page.$eval('a[rel=next]', (a) => a.getAttribute('href')!), kit.app.baseUrl);
  t.is(next.searchParams.get('status'), 'failed');
  t.is(next.searchParams.get('provider'), 'provider_c');
  await Promise.all([page.waitForNavigation(), page.click('a[rel=next]')]);
  reasons = (await rowsOf(page, '')).map((r) => r[5]);
  t.deepEqual(reasons, ['reason 4', 'reason 3', 'reason 2', 'reason 1', 'reason 0']);
  await page.goto(`${kit.app.baseUrl}/admin/provider-events?status=received&provider=provider_b`);
  t.deepEqual(await texts(page, '.empty'), ['No provider events match these filters.']);
  const bad = await fetch(`${kit.app.baseUrl}/admin/provider-events?status=lost`, { headers: { cookie } });
  t.is(bad.status, 400);

  const markup = '<img src=x onerror=alert(1)>';
  const [odd] = await db()('provider_events')
    .insert({
      provider: 'provider_a',
      event_id: 'markup',
      event_type: markup,
      payload: { note: markup },
      status: 'failed',
      failure_reason: markup,
    })
    .returning('id');
  await page.goto(`${kit.app.baseUrl}/admin/provider-events/${odd.id}`);
  t.deepEqual(await texts(page, 'h1'), [`provider_a ${markup}`]);
  t.is(await page.$('main img'), null);
  t.deepEqual(dialogs, []);
  t.truthy(await page.$(`form[action="/admin/provider-events/${odd.id}/replay"]`));
  await close();
  for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
    const res = await fetch(`${kit.app.baseUrl}/admin/provider-events/${id}`, { headers: { cookie } });
    t.is(res.status, 404, id);
    t.regex(await res.text(), /Provider event not found/);
  }
});

test.serial('list and detail read at 360 px without sideways scrolling, with one h1', async (t) => {
  const one = await db()('provider_events').where({ event_id: 'markup' }).first();
  for (const path of ['/admin/provider-events', `/admin/provider-events/${one.id}`]) {
    const { page, close } = await kit.adminPage(path, 360);
    t.is((await page.$$('h1')).length, 1, path);
    t.false(await scrollsSideways(page), path);
    await close();
  }
});
