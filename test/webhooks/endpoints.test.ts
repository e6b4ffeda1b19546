import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';

const base = '/api/billing/webhooks/endpoints';
let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const admin = (path: string, options: Parameters<typeof request>[2] = {}) =>
  request(app.baseUrl, path, { cookie, ...options });

test('create answers the record with a generated whsec_ secret once; the list never shows it', async (t) => {
  const created = await admin(base, {
    body: { url: 'https://hooks.example.test/in', events: ['invoice.paid', 'license.created'] },
  });
  t.is(created.status, 201, created.text);
  t.like(created.body, {
    url: 'https://hooks.example.test/in',
    events: ['invoice.paid', 'license.created'],
    enabled: true,
  });
  t.regex(created.body.id, /^[0-9a-f-]{36}$/);
  t.regex(created.body.createdAt, /Z$/);
  t.regex(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.is(Buffer.from(created.body.secret.slice(6), 'base64').length, 32);

  const list = await admin(base);
  t.is(list.status, 200);
  const listed = list.body.find((e: { id: string }) => e.id === created.body.id);
  t.truthy(listed);
  t.false('secret' in listed);
  t.false(list.text.includes(created.body.secret));
});

test('a given secret is kept; * subscribes to everything', async (t) => {
  const created = await admin(base, {
    body: { url: 'http://hooks.example.test/all', events: ['*'], secret: 'my-own-secret-0123456789' },
  });
  t.is(created.status, 201);
  t.is(created.body.secret, 'my-own-secret-0123456789');
  t.deepEqual(created.body.events, ['*']);
  t.is((await app.db('webhook_endpoints').where({ id: created.body.id }).first()).secret, 'my-own-secret-0123456789');
});

test('PUT changes events, url, enabled and secret; DELETE answers 204 then 404', async (t) => {
  const created = await admin(base, { body: { url: 'https://a.example.test/', events: ['invoice.paid'] } });
  const updated = await admin(`${base}/${created.body.id}`, {
    method: 'PUT',
    body: {
      events: ['payment.failed', 'payment.succeeded'],
      url: 'https://b.example.test/x',
      enabled: false,
      secret: 'rotated-secret-0123456789',
    },
  });
  t.is(updated.status, 200, updated.text);
  t.like(updated.body, {
    id: created.body.id,
    url: 'https://b.example.test/x',
    events: ['payment.failed', 'payment.succeeded'],
    enabled: false,
  });
  t.false('secret' in updated.body);
  t.is((await app.db('webhook_endpoints').where({ id: created.body.id }).first()).secret, 'rotated-secret-0123456789');

  t.is((await admin(`${base}/${created.body.id}`, { method: 'DELETE' })).status, 204);
  t.is((await admin(`${base}/${created.body.id}`, { method: 'DELETE' })).status, 404);
  t.is((await admin(`${base}/${created.body.id}`, { method: 'PUT', body: { enabled: true } })).status, 404);
  t.is((await admin(`${base}/not-a-uuid`, { method: 'PUT', body: { enabled: true } })).status, 404);
});

test('unknown event types and empty events are 400 invalid_request naming events', async (t) => {
  for (const events of [['invoice.exploded'], [], ['*', 'nope'], 'invoice.paid']) {
    const res = await admin(base, { body: { url: 'https://hooks.example.test/', events } });
    t.is(res.status, 400, JSON.stringify(events));
    t.is(res.body.error.code, 'invalid_request');
    t.true(
      res.body.error.details.some((d: { path: string }) => d.path.startsWith('events')),
      res.text,
    );
  }
  const missing = await admin(base, { body: { url: 'https://hooks.example.test/' } });
  t.is(missing.status, 400);
  const put = await admin(base, { body: { url: 'https://hooks.example.test/', events: ['invoice.paid'] } });
  const badPut = await admin(`${base}/${put.body.id}`, { method: 'PUT', body: { events: [] } });
  t.is(badPut.status, 400);
});

test('non-http(s) and malformed URLs, and URLs holding a user name or password, are 400 naming url', async (t) => {
  for (const url of [
    'ftp://hooks.example.test/',
    'file:///etc/passwd',
    'not a url',
    'javascript:alert(1)',
    'https://user:pass@hooks.example.test/',
    'https://token@hooks.example.test/',
  ]) {
    const res = await admin(base, { body: { url, events: ['invoice.paid'] } });
    t.is(res.status, 400, url);
    t.is(res.body.error.code, 'invalid_request');
    t.is(res.body.error.details[0].path, 'url', res.text);
  }
});

test('every endpoint route needs an admin session (401)', async (t) => {
  const id = '00000000-0000-4000-8000-000000000000';
  for (const [method, path] of [
    ['POST', base],
    ['GET', base],
    ['PUT', `${base}/${id}`],
    ['DELETE', `${base}/${id}`],
    ['GET', `${base}/${id}/deliveries`],
    ['POST', `${base}/${id}/deliveries/${id}/retry`],
  ]) {
    const res = await request(app.baseUrl, path!, {
      method,
      body: method === 'POST' || method === 'PUT' ? { url: 'https://x.example.test', events: ['*'] } : undefined,
    });
    t.is(res.status, 401, `${method} ${path}`);
    t.is(res.body.error.code, 'unauthenticated');
  }
});

test('deliveries of an unknown endpoint are 404', async (t) => {
  t.is((await admin(`${base}/00000000-0000-4000-8000-000000000000/deliveries`)).status, 404);
});

test(
  'with private URLs disallowed, loopback, private, link-local, metadata, CGNAT and IPv6 private hosts are ' +
    'refused',
  async (t) => {
    const strict = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
    try {
      const { cookie: strictCookie } = await loginAsAdmin(strict.baseUrl, strict.db);
      for (const url of [
        'http://127.0.0.1:9/x',
        'http://localhost/x',
        'http://10.1.2.3/',
        'http://172.20.0.1/',
        'http://192.168.1.1/',
        'http://169.254.169.254/latest/meta-data',
        'http://100.64.0.1/',
        'http://0.0.0.0/',
        'http://[::1]/',
        'http://[fe80::1]/',
        'http://[fd00::1]/',
        'http://[::ffff:127.0.0.1]/',
        'http://[::]/',
      ]) {
        const res = await request(strict.baseUrl, base, {
          cookie: strictCookie,
          body: { url, events: ['invoice.paid'] },
        });
        t.is(res.status, 400, url);
        t.is(res.body.error?.code, 'invalid_request', url);
        t.is(res.body.error?.details?.[0]?.path, 'url', url);
      }
      const publicIp = await request(strict.baseUrl, base, {
        cookie: strictCookie,
        body: { url: 'https://93.184.215.14/hook', events: ['invoice.paid'] },
      });
      t.is(publicIp.status, 201, publicIp.text);
      t.is(Number((await strict.db('webhook_endpoints').count('* as n').first())!.n), 1);
    } finally {
      await strict.close();
    }
  },
);

test('the NAT64 and IPv4-compatible probes of issue 33 are refused at create and update', async (t) => {
  const strict = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
  try {
    const { cookie: strictCookie } = await loginAsAdmin(strict.baseUrl, strict.db);
    for (const [url, address] of [
      ['http://[64:ff9b::a9fe:a9fe]/latest', '64:ff9b::a9fe:a9fe'],
      ['http://[::127.0.0.1]:3999', '::7f00:1'],
    ] as const) {
      const res = await request(strict.baseUrl, base, {
        cookie: strictCookie,
        body: { url, events: ['invoice.paid'] },
      });
      t.is(res.status, 400, `${url}: ${res.text}`);
      t.is(res.body.error.code, 'invalid_request');
      t.deepEqual(res.body.error.details, [
        { path: 'url', message: `host [${address}] resolves to ${address}, not a public address` },
      ]);
    }
    t.is(Number((await strict.db('webhook_endpoints').count('* as n').first())!.n), 0, 'nothing was stored');
    const created = await request(strict.baseUrl, base, {
      cookie: strictCookie,
      body: { url: 'https://93.184.215.14/hook', events: ['invoice.paid'] },
    });
    t.is(created.status, 201, created.text);
    const moved = await request(strict.baseUrl, `${base}/${created.body.id}`, {
      method: 'PUT',
      cookie: strictCookie,
      body: { url: 'http://[64:ff9b::a9fe:a9fe]/latest' },
    });
    t.is(moved.status, 400, moved.text);
    t.is(moved.body.error.details[0].path, 'url');
    t.is(
      (await strict.db('webhook_endpoints').where({ id: created.body.id }).first()).url,
      'https://93.184.215.14/hook',
    );
  } finally {
    await strict.close();
  }
});

test('https is required in production', async (t) => {
  const { validateEndpointUrl } = await import('../../src/webhooks/service.ts');
  await t.throwsAsync(
    validateEndpointUrl('http://93.184.215.14/', { NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE_URLS: false }),
    { message: /https/ },
  );
  t.is(
    await validateEndpointUrl('https://93.184.215.14/', { NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE_URLS: false }),
    'https://93.184.215.14/',
  );
});

test(
  'rotate-secret answers a new secret once (a keyed replay does not), keeps the old one signing for 24 h, and never ' +
    'lists either',
  async (t) => {
    const created = await admin(base, { body: { url: 'https://hooks.example.test/rotate', events: ['invoice.paid'] } });
    t.is(created.body.secretRotatedAt, null);
    t.is(created.body.previousSecretExpiresAt, null);
    const rotated = await admin(`${base}/${created.body.id}/rotate-secret`, {
      method: 'POST',
      headers: { 'idempotency-key': 'rotate-once' },
    });
    t.is(rotated.status, 200, rotated.text);
    t.regex(rotated.body.secret, /^whsec_/);
    t.not(rotated.body.secret, created.body.secret);
    const row = await app.db('webhook_endpoints').where({ id: created.body.id }).first();
    t.like(row, { secret: rotated.body.secret, previous_secret: created.body.secret });
    const grace = Date.parse(rotated.body.previousSecretExpiresAt) - Date.parse(rotated.body.secretRotatedAt);
    t.true(Math.abs(grace - 24 * 3600 * 1000) < 1000, `${grace} ms`);

    const replay = await admin(`${base}/${created.body.id}/rotate-secret`, {
      method: 'POST',
      headers: { 'idempotency-key': 'rotate-once' },
    });
    t.is(replay.status, 200);
    t.false('secret' in replay.body);
    t.is(
      (await app.db('webhook_endpoints').where({ id: created.body.id }).first()).secret,
      rotated.body.secret,
      'a replay rotates nothing',
    );
    const listed = (await admin(`${base}?limit=500`)).body.find((e: { id: string }) => e.id === created.body.id);
    t.false(JSON.stringify(listed).includes('whsec_'));

    // A secret set by PUT replaces it at once: no grace period.
    t.is(
      (await admin(`${base}/${created.body.id}`, { method: 'PUT', body: { secret: 'a-secret-set-outright-1234' } }))
        .status,
      200,
    );
    t.like(await app.db('webhook_endpoints').where({ id: created.body.id }).first(), {
      previous_secret: null,
      previous_secret_expires_at: null,
    });
    t.is((await admin(`${base}/00000000-0000-4000-8000-000000000000/rotate-secret`, { method: 'POST' })).status, 404);
  },
);
