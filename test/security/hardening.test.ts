/**
 * Security review checks (issue 9 item 5): constant-time secret comparison, secrets kept out of logs and
 * out of the database in plaintext, security headers, session fixation, CSRF, password and key hashing.
 * Login throttling is tested in test/auth/throttle.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { sha256Hex, secretsEqual } from '../../src/crypto/tokens.ts';
import { createLogger } from '../../src/logger.ts';
import { allRoutes } from '../../src/web/routes.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAs, loginAsAdmin } from '../helpers/auth.ts';
import { request, sessionCookie } from '../helpers/http.ts';
import { errorShapeProblems } from './error-shape.ts';
import { changedTables, fingerprintQuery } from './fingerprint.ts';
import { fillPath, pathParamNames, routeName } from './world.ts';

const CRON_SECRET = `cron-${randomBytes(16).toString('hex')}`;
const logLines: string[] = [];

let app: TestApp;
let adminCookie: string;
test.before(async () => {
  app = await startTestApp(
    { CRON_SECRET, LOG_LEVEL: 'trace' },
    { logDestination: { write: (line: string) => void logLines.push(line) } },
  );
  ({ cookie: adminCookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const tokenOf = (cookie: string) => cookie.slice('session='.length);

// ---- Constant-time comparison ------------------------------------------------------------------------

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith('.ts') ? [full] : [];
  });
}

// Secret-looking operands of `===`, `!==`, `==`, `!=`, Buffer#equals or localeCompare.
const SECRET_NAME = /secret|token|signature|password|api_?key|hmac|digest|\bsig\b/i;
const OPERAND = String.raw`[\w.$[\]'"${'`'}-]+`;
const COMPARISON = new RegExp(
  String.raw`(${OPERAND})\s*(?:===|!==|==|!=)\s*(${OPERAND})|([\w.$[\]()]+)\.(?:equals|localeCompare)\(\s*(${OPERAND})`,
  'g',
);
// Operands that make a comparison a type, presence or public-constant check rather than a comparison of secrets.
const NOT_A_SECRET = /^(?:undefined|null|true|false|\d+|'[^']*'|"[^"]*"|`[^`]*`|[A-Z][A-Z0-9_]*)$/;

/** The comparisons on a line of code where a secret meets something other than a literal or public constant. */
function secretComparisons(code: string): string[] {
  if (/\btypeof\b/.test(code)) return [];
  return [...code.matchAll(COMPARISON)]
    .map((m) => [m[1] ?? m[3]!, m[2] ?? m[4]!])
    .filter(
      ([a, b]) => (SECRET_NAME.test(a!) || SECRET_NAME.test(b!)) && !NOT_A_SECRET.test(a!) && !NOT_A_SECRET.test(b!),
    )
    .map(([a, b]) => `${a} vs ${b}`);
}

test('secrets are compared in constant time: no ===, !== or equals on a secret in src/ (secretsEqual instead)', (t) => {
  // The scanner itself: it must catch the usual shapes and let type checks pass.
  t.deepEqual(secretComparisons('if (signature !== expected) throw e;'), ['signature vs expected']);
  t.deepEqual(secretComparisons('return given === deps.config.CRON_SECRET;'), ['given vs deps.config.CRON_SECRET']);
  t.is(secretComparisons('if (Buffer.from(token).equals(stored)) ok();').length, 1);
  t.deepEqual(secretComparisons("if (typeof tokens.access_token !== 'string') throw e;"), []);
  t.deepEqual(secretComparisons('if (input.secret !== undefined) x();'), []);
  t.deepEqual(secretComparisons('if (value === SECRET_MASK) continue;'), []);

  const offenders: string[] = [];
  for (const file of sourceFiles('src')) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const found = secretComparisons(line.replace(/\/\/.*$/, ''));
        if (found.length > 0) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  t.deepEqual(offenders, [], 'compare secrets with secretsEqual (src/crypto/tokens.ts)');
});

test('secretsEqual: equal, unequal, different lengths and empty values, without throwing', (t) => {
  t.true(secretsEqual('s3cret-value', 's3cret-value'));
  t.true(secretsEqual(Buffer.from('abc'), 'abc'));
  t.false(secretsEqual('s3cret-value', 's3cret-valuE'));
  t.false(secretsEqual('s3cret-value', 's3cret-value-longer'));
  t.false(secretsEqual('', 'x'));
  t.false(secretsEqual('é', 'e\u0301'));
});

// ---- Secrets in logs and in the database --------------------------------------------------------------

test.serial(
  'no secret reaches the logs: password, session token, API key, cron secret, webhook and IdP secrets (logged at ' +
    'trace)',
  async (t) => {
    const { email, password } = await loginAs(app.baseUrl, app.db, 'admin');
    const login = await request(app.baseUrl, '/api/auth/login', { body: { email, password } });
    const cookie = sessionCookie(login);
    const wrongPassword = `wrong-${randomBytes(8).toString('hex')}`;
    t.is((await request(app.baseUrl, '/api/auth/login', { body: { email, password: wrongPassword } })).status, 401);
    const [customer] = await app
      .db('customers')
      .insert({ name: 'Log Test', email: `log-${randomBytes(4).toString('hex')}@example.test` })
      .returning('id');
    const key = await request(app.baseUrl, '/api/api-keys', {
      cookie,
      body: { name: 'log test', customerId: customer.id },
    });
    t.is(key.status, 201);
    t.is((await request(app.baseUrl, '/api/v1/customer', { bearer: key.body.key })).status, 200);
    const cronRoute = allRoutes.find((r) => r.auth === 'cron');
    const cronPath = cronRoute ? fillPath(cronRoute, {}) : '/api/billing/cron/lifecycle';
    t.true(
      (await request(app.baseUrl, cronPath, { method: 'POST', headers: { 'x-cron-secret': CRON_SECRET } })).status <
        300,
    );
    t.is(
      (await request(app.baseUrl, cronPath, { method: 'POST', headers: { 'x-cron-secret': `${CRON_SECRET}-wrong` } }))
        .status,
      401,
    );
    const webhookSecret = `whsec_${randomBytes(16).toString('hex')}`;
    t.is(
      (
        await request(app.baseUrl, '/api/billing/webhooks/endpoints', {
          cookie,
          body: { url: 'http://127.0.0.1:9/x', events: ['*'], secret: webhookSecret },
        })
      ).status,
      201,
    );
    const idpSecret = `idp-${randomBytes(16).toString('hex')}`;
    t.is(
      (
        await request(app.baseUrl, '/api/settings', {
          method: 'PUT',
          cookie,
          body: { 'auth.idp.client_secret': idpSecret },
        })
      ).status,
      200,
    );
    // Credentials on a request that fails, and an Idempotency-Key.
    t.is(
      (
        await request(app.baseUrl, '/api/products/not-a-uuid', {
          cookie,
          headers: { 'idempotency-key': 'idem-log-test' },
        })
      ).status,
      404,
    );

    const output = logLines.join('');
    t.regex(output, /"path":"\/api\/auth\/login"/, 'the capture holds the request log');
    t.regex(output, /"path":"\/api\/v1\/customer"/);
    const secrets = {
      password,
      wrongPassword,
      sessionToken: tokenOf(cookie),
      apiKey: key.body.key,
      cronSecret: CRON_SECRET,
      webhookSecret,
      idpSecret,
    };
    for (const [name, value] of Object.entries(secrets)) t.false(output.includes(value), `${name} was logged`);
  },
);

test('the logger redacts secrets wherever a log call puts them: fields, nested fields, request headers', (t) => {
  const lines: string[] = [];
  const logger = createLogger({ LOG_LEVEL: 'info' }, 'redaction-test', {
    write: (line: string) => void lines.push(line),
  });
  const headers = {
    authorization: 'Bearer HDR-AUTH',
    cookie: 'session=HDR-COOKIE',
    'x-cron-secret': 'HDR-CRON',
    'provider_a-signature': 't=1,v1=HDR-SIG-A',
    'x-callback-token': 'HDR-TOKEN-B',
    'x-signature': 'HDR-SIG-C',
  };
  logger.info(
    {
      password: 'F-PASSWORD',
      token: 'F-TOKEN',
      secret: 'F-SECRET',
      apiKey: 'F-APIKEY',
      client_secret: 'F-CLIENT',
      user: { password: 'N-PASSWORD', password_hash: 'N-HASH' },
      endpoint: { secret: 'N-SECRET' },
    },
    'fields',
  );
  logger.info({ headers }, 'headers');
  logger.info({ req: { headers }, request: { header: headers } }, 'nested headers');
  const output = lines.join('');
  t.is(lines.length, 3);
  t.notRegex(output, /F-|N-|HDR-/, output);
  t.regex(output, /\[redacted\]/);
});

test.serial('no password, session token or API key is stored in plaintext anywhere in the database', async (t) => {
  const { email, password, cookie } = await loginAs(app.baseUrl, app.db, 'admin');
  const [customer] = await app
    .db('customers')
    .insert({ name: 'Plaintext Test', email: `pt-${randomBytes(4).toString('hex')}@example.test` })
    .returning('id');
  const key = await request(app.baseUrl, '/api/api-keys', {
    cookie,
    body: { name: 'plaintext test', customerId: customer.id },
  });
  t.is(key.status, 201);
  const tables = (await app
    .db('information_schema.tables')
    .where({ table_schema: 'public', table_type: 'BASE TABLE' })
    .pluck('table_name')) as string[];
  const dump = (await Promise.all(tables.map(async (table) => JSON.stringify(await app.db(table).select('*'))))).join(
    '\n',
  );
  t.true(dump.includes(email), 'the dump holds the user');
  for (const [name, value] of Object.entries({ password, sessionToken: tokenOf(cookie), apiKey: key.body.key }))
    t.false(dump.includes(value), `${name} is stored in plaintext`);
  t.true(dump.includes(sha256Hex(key.body.key)), 'the key is stored as its SHA-256');
  t.true(dump.includes(sha256Hex(tokenOf(cookie))), 'the session token is stored as its SHA-256');
});

// ---- Hashing parameters (documented in README's Security section) ------------------------------------

test('passwords are hashed with Argon2id, m=64 MiB, t=3, p=4, a 16-byte salt and a 32-byte hash', async (t) => {
  const { email } = await loginAs(app.baseUrl, app.db, 'admin');
  const { password_hash: hash } = await app.db('users').where({ email }).first('password_hash');
  const match = /^\$argon2id\$v=19\$([a-z0-9=,]+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(hash);
  t.truthy(match, hash);
  t.deepEqual(Object.fromEntries(match![1]!.split(',').map((p) => p.split('='))), { m: '65536', t: '3', p: '4' });
  t.is(Buffer.from(match![2]!, 'base64').length, 16);
  t.is(Buffer.from(match![3]!, 'base64').length, 32);
});

test(
  'API keys carry 256 random bits after a recognisable prefix; ' + 'session tokens 256 bits; both stored as SHA-256',
  async (t) => {
    const [customer] = await app
      .db('customers')
      .insert({ name: 'Key Bits', email: `kb-${randomBytes(4).toString('hex')}@example.test` })
      .returning('id');
    const res = await request(app.baseUrl, '/api/api-keys', {
      cookie: adminCookie,
      body: { name: 'bits', customerId: customer.id },
    });
    const match = /^bsk_([A-Za-z0-9_-]+)$/.exec(res.body.key);
    t.truthy(match);
    t.is(Buffer.from(match![1]!, 'base64url').length, 32);
    t.is((await app.db('api_keys').where({ id: res.body.id }).first('key_hash')).key_hash, sha256Hex(res.body.key));
    t.is(Buffer.from(tokenOf(adminCookie), 'base64url').length, 32);
  },
);

// ---- Headers -----------------------------------------------------------------------------------------

function assertSecurityHeaders(t: import('ava').ExecutionContext, headers: Headers, label: string) {
  t.is(headers.get('x-content-type-options'), 'nosniff', label);
  t.is(headers.get('x-frame-options'), 'DENY', label);
  t.is(headers.get('referrer-policy'), 'no-referrer', label);
  t.is(headers.get('cross-origin-resource-policy'), 'same-origin', label);
  t.regex(headers.get('content-security-policy') ?? '', /default-src 'none'.*frame-ancestors 'none'/, label);
  t.is(headers.get('x-powered-by'), null, label);
  t.is(headers.get('access-control-allow-origin'), null, `${label}: no CORS`);
}

test(
  'security headers on every kind of answer: JSON, errors, unknown routes, the docs page; no CORS for other ' +
    'origins',
  async (t) => {
    const origin = { origin: 'https://evil.example' };
    const answers = {
      health: await request(app.baseUrl, '/healthz', { headers: origin }),
      'admin JSON': await request(app.baseUrl, '/api/settings', { cookie: adminCookie, headers: origin }),
      'a 401': await request(app.baseUrl, '/api/settings', { headers: origin }),
      'a 404': await request(app.baseUrl, '/nope', { headers: origin }),
      'a 415': await request(app.baseUrl, '/api/products', {
        cookie: adminCookie,
        rawBody: 'a=b',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...origin },
      }),
      'the docs page': await request(app.baseUrl, '/docs', { headers: origin }),
      'a preflight': await request(app.baseUrl, '/api/products', {
        method: 'OPTIONS',
        headers: {
          ...origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      }),
    };
    for (const [label, res] of Object.entries(answers)) assertSecurityHeaders(t, res.headers, label);
    t.is(answers['a 401'].status, 401);
    t.false((answers['a preflight'].headers.get('access-control-allow-methods') ?? '').includes('POST'));
  },
);

test(
  'API answers are not stored by caches (Cache-Control: no-store), ' + 'login and a shown-once API key included',
  async (t) => {
    const { email, password } = await loginAs(app.baseUrl, app.db, 'admin');
    const login = await request(app.baseUrl, '/api/auth/login', { body: { email, password } });
    const [customer] = await app
      .db('customers')
      .insert({ name: 'Cache Test', email: `cache-${randomBytes(4).toString('hex')}@example.test` })
      .returning('id');
    const key = await request(app.baseUrl, '/api/api-keys', {
      cookie: adminCookie,
      body: { name: 'cache', customerId: customer.id },
    });
    for (const [label, res] of Object.entries({
      login,
      key,
      settings: await request(app.baseUrl, '/api/settings', { cookie: adminCookie }),
      error: await request(app.baseUrl, '/api/settings'),
    })) {
      t.regex(res.headers.get('cache-control') ?? '', /no-store/, label);
    }
  },
);

test('HSTS is sent over https (behind a trusted proxy) and not over plain http', async (t) => {
  const proxied = await startTestApp({ TRUST_PROXY: 'true' });
  try {
    const https = await request(proxied.baseUrl, '/healthz', { headers: { 'x-forwarded-proto': 'https' } });
    t.regex(https.headers.get('strict-transport-security') ?? '', /max-age=\d{7,}/);
    t.is((await request(proxied.baseUrl, '/healthz')).headers.get('strict-transport-security'), null);
  } finally {
    await proxied.close();
  }
});

// ---- Sessions ----------------------------------------------------------------------------------------

test.serial(
  'session fixation: a session id presented at login is never the one after it, and is not upgraded',
  async (t) => {
    const admin = await loginAs(app.baseUrl, app.db, 'admin');
    const planted = `session=${randomBytes(32).toString('base64url')}`;
    const support = await loginAs(app.baseUrl, app.db, 'support');
    for (const presented of [planted, support.cookie, admin.cookie]) {
      const res = await request(app.baseUrl, '/api/auth/login', {
        body: { email: admin.email, password: admin.password },
        cookie: presented,
      });
      t.is(res.status, 200);
      const issued = sessionCookie(res);
      t.not(issued, presented);
      t.is((await request(app.baseUrl, '/api/settings', { cookie: issued })).status, 200);
    }
    // The planted id never became a session; the support user's session is still the support user's.
    t.is(
      await app
        .db('sessions')
        .where({ token_hash: sha256Hex(tokenOf(planted)) })
        .first(),
      undefined,
    );
    t.is((await request(app.baseUrl, '/api/settings', { cookie: support.cookie })).status, 403);
  },
);

// ---- CSRF --------------------------------------------------------------------------------------------

test.serial('CSRF: the session cookie is HttpOnly and SameSite=Lax', async (t) => {
  const { email, password } = await loginAs(app.baseUrl, app.db, 'admin');
  const res = await request(app.baseUrl, '/api/auth/login', { body: { email, password } });
  const attributes = (res.headers.get('set-cookie') ?? '').split(';').map((a) => a.trim().toLowerCase());
  t.true(attributes.includes('httponly'));
  t.true(attributes.includes('samesite=lax'));
});

// What an HTML form or a "simple" cross-site fetch can send without a CORS preflight.
const SIMPLE_BODIES: [string, string][] = [
  ['application/x-www-form-urlencoded', 'name=x&amount=10'],
  ['application/x-www-form-urlencoded', ''],
  ['multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--b--\r\n'],
  ['text/plain', '{"name":"x","productType":"saas","price":"10"}'],
  ['text/plain', ''],
];

test.serial(
  'CSRF: a form-encoded, multipart or text/plain POST/PUT with the session cookie is refused 415 on every cookie ' +
    'route and changes nothing',
  async (t) => {
    const fingerprint = await fingerprintQuery(app.db);
    // The cookie routes: the admin API, and logout (which takes the cookie too).
    const routes = allRoutes.filter(
      (r) =>
        (r.method === 'post' || r.method === 'put') && (r.auth === 'admin' || routeName(r) === 'POST /api/auth/logout'),
    );
    t.true(routes.length > 10);
    // A session of its own: a logout that got through must not end the other tests' session.
    const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
    const before = await fingerprint();
    for (const route of routes) {
      const params = Object.fromEntries(
        pathParamNames(route).map((n) => [
          n,
          n === 'key' ? 'LIC-AAAA-BBBB-CCCC' : '00000000-0000-4000-8000-000000000000',
        ]),
      );
      for (const [type, body] of SIMPLE_BODIES) {
        const res = await request(app.baseUrl, fillPath(route, params), {
          method: route.method.toUpperCase(),
          cookie,
          rawBody: body,
          headers: { 'content-type': type },
        });
        const label = `${routeName(route)} as ${type} (${body.length} bytes)`;
        t.is(res.status, 415, `${label}: ${res.text.slice(0, 200)}`);
        t.deepEqual(errorShapeProblems(res), [], label);
      }
    }
    t.deepEqual(changedTables(before, await fingerprint()), []);
    t.is(
      (await request(app.baseUrl, '/api/settings', { cookie })).status,
      200,
      'the session survived the logout attempts',
    );
  },
);
