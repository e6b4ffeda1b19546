/**
 * The access-control matrix, generated from the route list (src/web/routes.ts) at run time: every route is
 * called with every credential that must not open it, by its auth kind, and must refuse in the D-1
 * shape without changing a row. Routes added later are covered without touching this file.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import test from 'ava';
import type { z } from 'zod';
import { sha256Hex } from '../../src/crypto/tokens.ts';
import type { AnyRoute, AuthKind } from '../../src/http/route.ts';
import { allRoutes } from '../../src/web/routes.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { PROVIDER_SECRETS } from '../helpers/provider-events.ts';
import { loginAs, loginAsAdmin } from '../helpers/auth.ts';
import { request, type JsonResponse, type RequestOptions } from '../helpers/http.ts';
import { undeclaredErrorProblem } from './declared-errors.ts';
import { errorShapeProblems } from './error-shape.ts';
import { changedTables, fingerprintQuery, type Fingerprint } from './fingerprint.ts';
import { buildWorld, existingParam, fillPath, pathParamNames, routeName, type World } from './world.ts';

const CRON_SECRET = `cron-${randomBytes(16).toString('hex')}`;

let app: TestApp;
let world: World;
let fingerprint: () => Promise<Fingerprint>;
const cookies = { admin: '', expired: '', loggedOut: '', nonAdmin: '' };
const keys = { revoked: '', expired: '' };

test.before(async () => {
  // Providers are configured: an unconfigured one answers 503 before any signature is read (D-92, its own test).
  app = await startTestApp({ CRON_SECRET, ...PROVIDER_SECRETS });
  cookies.admin = (await loginAsAdmin(app.baseUrl, app.db)).cookie;
  world = await buildWorld(app, cookies.admin);

  cookies.expired = (await loginAsAdmin(app.baseUrl, app.db)).cookie;
  await app
    .db('sessions')
    .where({ token_hash: sha256Hex(cookies.expired.slice('session='.length)) })
    .update({ expires_at: app.db.raw("now() - interval '1 second'") });
  cookies.loggedOut = (await loginAsAdmin(app.baseUrl, app.db)).cookie;
  const logout = await request(app.baseUrl, '/api/auth/logout', { method: 'POST', cookie: cookies.loggedOut });
  if (logout.status !== 204) throw new Error(`logout: ${logout.status}`);
  // The user model has roles (D-10): any role but admin is a logged-in user the admin API refuses.
  cookies.nonAdmin = (await loginAs(app.baseUrl, app.db, 'support')).cookie;

  const revoked = await request(app.baseUrl, '/api/api-keys', {
    cookie: cookies.admin,
    body: { name: 'revoked', customerId: world.a.customerId },
  });
  await request(app.baseUrl, `/api/api-keys/${revoked.body.id}`, { method: 'DELETE', cookie: cookies.admin });
  keys.revoked = revoked.body.key;
  const expired = await request(app.baseUrl, '/api/api-keys', {
    cookie: cookies.admin,
    body: {
      name: 'expired',
      customerId: world.a.customerId,
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    },
  });
  await app
    .db('api_keys')
    .where({ id: expired.body.id })
    .update({ expires_at: app.db.raw("now() - interval '1 second'") });
  keys.expired = expired.body.key;

  fingerprint = await fingerprintQuery(app.db);
});
test.after.always(async () => app?.close());

/**
 * A well-formed value for each path parameter: a random UUID where the schema wants one, else a random token it
 * accepts.
 */
function wellFormedParams(route: AnyRoute): Record<string, string> {
  const values: Record<string, string> = {};
  const shape = (route.params as z.ZodObject | undefined)?.shape ?? {};
  for (const name of pathParamNames(route)) {
    const schema = shape[name] as z.ZodType | undefined;
    const uuid = randomUUID();
    values[name] =
      !schema || schema.safeParse(uuid).success ? uuid : `LIC-${randomBytes(6).toString('hex').toUpperCase()}`;
    if (schema && !schema.safeParse(values[name]).success)
      throw new Error(`cannot make a well-formed :${name} for ${routeName(route)}`);
  }
  return values;
}

interface Credential {
  name: string;
  options: RequestOptions;
}

/** One call of the route: no body for GET/DELETE, an empty JSON object otherwise. */
function call(
  route: AnyRoute,
  params: Record<string, string>,
  credential: RequestOptions,
  query = '',
): Promise<JsonResponse> {
  const hasBody = route.method === 'post' || route.method === 'put';
  return request(app.baseUrl, `${fillPath(route, params)}${query}`, {
    method: route.method.toUpperCase(),
    ...(hasBody ? { body: {} } : {}),
    ...credential,
  });
}

interface Expectation {
  status: number;
  code: string;
}

/** Calls the route with each credential, checks the refusal and that no table changed. */
async function assertRefused(
  t: import('ava').ExecutionContext,
  route: AnyRoute,
  attempts: [Credential, Expectation][],
  params = wellFormedParams(route),
) {
  const before = await fingerprint();
  for (const [credential, expected] of attempts) {
    const res = await call(route, params, credential.options);
    const label = `${routeName(route)} with ${credential.name}`;
    t.is(res.status, expected.status, `${label}: ${res.text.slice(0, 200)}`);
    t.is(res.body?.error?.code, expected.code, label);
    t.deepEqual(errorShapeProblems(res), [], label);
    t.is(undeclaredErrorProblem(route, res), undefined, label);
  }
  t.deepEqual(changedTables(before, await fingerprint()), [], `${routeName(route)}: refused requests changed rows`);
}

const routesOf = (kind: AuthKind) => allRoutes.filter((r) => r.auth === kind);
const unauthenticated: Expectation = { status: 401, code: 'unauthenticated' };

test.serial('the route list has routes of every auth kind the interface names, except those still being built', (t) => {
  for (const kind of ['admin', 'apiKey', 'public'] as AuthKind[]) t.true(routesOf(kind).length > 0, kind);
  const counts = Object.fromEntries(
    (['admin', 'apiKey', 'public', 'cron', 'provider'] as AuthKind[]).map((k) => [k, routesOf(k).length]),
  );
  t.log(`routes by auth kind: ${JSON.stringify(counts)}`);
});

// The interface's Auth column, as path rules: v1 takes an API key, cron the cron secret, provider webhooks a
// signature, everything else under /api/ an admin session, except a short list of public endpoints.
const PUBLIC_API_ROUTES = new Set([
  'POST /api/auth/login',
  'POST /api/auth/logout',
  'POST /api/licenses/verify',
  'POST /api/licenses/validate',
  'POST /api/licenses/checkout',
  'POST /api/licenses/heartbeat',
  'GET /api/licenses/signing-keys',
  'GET /api/openapi.json',
]);
function expectedAuth(route: AnyRoute): AuthKind {
  if (!route.path.startsWith('/api/')) return 'public';
  if (route.path.startsWith('/api/v1/')) return 'apiKey';
  if (route.path.startsWith('/api/billing/cron/')) return 'cron';
  if (/^\/api\/billing\/webhooks\/provider_[a-z]+$/.test(route.path)) return 'provider';
  if (PUBLIC_API_ROUTES.has(routeName(route))) return 'public';
  return 'admin';
}

test.serial(
  'every route declares the auth kind its path calls for (a new public route is a deliberate choice)',
  (t) => {
    for (const route of allRoutes) t.is(route.auth, expectedAuth(route), routeName(route));
  },
);

for (const route of routesOf('admin')) {
  test.serial(`admin ${routeName(route)}: refused without a live admin session, and opens with one`, async (t) => {
    await assertRefused(t, route, [
      [{ name: 'no credentials', options: {} }, unauthenticated],
      [
        { name: 'an unknown session token', options: { cookie: `session=${randomBytes(32).toString('base64url')}` } },
        unauthenticated,
      ],
      [{ name: 'an expired session', options: { cookie: cookies.expired } }, unauthenticated],
      [{ name: 'a logged-out session', options: { cookie: cookies.loggedOut } }, unauthenticated],
      [
        { name: 'a non-admin session', options: { cookie: cookies.nonAdmin } },
        { status: 403, code: 'forbidden' },
      ],
      [{ name: 'an API key', options: { bearer: world.a.apiKey } }, unauthenticated],
      [{ name: 'the cron secret', options: { headers: { 'x-cron-secret': CRON_SECRET } } }, unauthenticated],
    ]);
    // The control: the same call with the admin session gets past authentication.
    const res = await call(route, wellFormedParams(route), { cookie: cookies.admin });
    t.false(
      [401, 403].includes(res.status),
      `${routeName(route)} with the admin session: ${res.status} ${res.text.slice(0, 200)}`,
    );
    t.is(undeclaredErrorProblem(route, res), undefined);
  });
}

const b = () => world.b;
/** Every identifier of customer B: none may show in an answer to customer A's key. */
const idsOfB = () => [
  b().customerId,
  b().productId,
  b().planId,
  b().subscriptionId,
  b().invoiceId,
  b().paymentId,
  b().licenseId,
  b().licenseKey,
  b().deviceId,
  b().paymentMethodId,
  b().apiKeyId,
];

for (const route of routesOf('apiKey')) {
  test.serial(`v1 ${routeName(route)}: refused without a live API key`, async (t) => {
    await assertRefused(t, route, [
      [{ name: 'no credentials', options: {} }, unauthenticated],
      [{ name: 'the admin session cookie', options: { cookie: cookies.admin } }, unauthenticated],
      [{ name: 'a revoked key', options: { bearer: keys.revoked } }, unauthenticated],
      [{ name: 'an expired key', options: { bearer: keys.expired } }, unauthenticated],
      [{ name: 'a malformed key', options: { bearer: 'not-a-key' } }, unauthenticated],
      [
        {
          name: 'a key with the right prefix and random bits',
          options: { bearer: `bsk_${randomBytes(32).toString('base64url')}` },
        },
        unauthenticated,
      ],
      [{ name: 'a live key with one more character', options: { bearer: `${world.a.apiKey}x` } }, unauthenticated],
      [{ name: 'a live key cut short', options: { bearer: world.a.apiKey.slice(0, -1) } }, unauthenticated],
      [
        {
          name: 'a live key sent as Basic',
          options: { headers: { authorization: `Basic ${Buffer.from(`${world.a.apiKey}:`).toString('base64')}` } },
        },
        unauthenticated,
      ],
      [
        { name: 'a live key without the Bearer scheme', options: { headers: { authorization: world.a.apiKey } } },
        unauthenticated,
      ],
      [{ name: 'the cron secret', options: { headers: { 'x-cron-secret': CRON_SECRET } } }, unauthenticated],
    ]);
  });

  const names = pathParamNames(route);
  if (names.length > 0) {
    test.serial(`v1 ${routeName(route)}: another customer's ids answer 404, the key's own ids answer`, async (t) => {
      const theirs = Object.fromEntries(names.map((n) => [n, existingParam(route, n, world, world.b)]));
      const ours = Object.fromEntries(names.map((n) => [n, existingParam(route, n, world, world.a)]));
      const missing = names.filter((n) => theirs[n] === undefined);
      if (missing.length > 0)
        return t.fail(
          `no fixture for :${missing.join(', :')} of ${routeName(route)}: teach test/security/world.ts ` +
            `existingParam about it`,
        );
      await assertRefused(
        t,
        route,
        [
          [
            { name: "customer A's key on customer B's record", options: { bearer: world.a.apiKey } },
            { status: 404, code: 'not_found' },
          ],
        ],
        theirs as Record<string, string>,
      );
      // The control, for answers that come at once (a PDF may first be rendered, D-53).
      if ((route.responses[200]?.contentType ?? 'application/json') === 'application/json') {
        const res = await call(route, ours as Record<string, string>, { bearer: world.a.apiKey });
        t.is(res.status, 200, `${routeName(route)} with its own record: ${res.text.slice(0, 200)}`);
      }
    });
  } else {
    test.serial(`v1 ${routeName(route)}: answers only the key's own customer's records`, async (t) => {
      const queries = [''];
      const startingAfter = existingParam(
        { ...route, path: `${route.path}/:startingAfter` },
        'startingAfter',
        world,
        world.b,
      );
      if ((route.query as z.ZodObject | undefined)?.shape?.startingAfter && startingAfter)
        queries.push(`?startingAfter=${startingAfter}`);
      // A v1 write (usage events, issue 35) naming customer B's subscription: answered per event, nothing of B's shown.
      // A v1 portal session (issue 37) is the key's customer's, whatever the body: an empty one, answered 201.
      const portal = route.path === '/api/v1/portal-sessions';
      const body = portal
        ? { body: {} }
        : route.method === 'post'
          ? {
              body: {
                events: [{ transactionId: 'matrix-1', metric: 'world_calls', subscriptionId: world.b.subscriptionId }],
              },
            }
          : {};
      for (const query of queries) {
        const res = await call(route, {}, { bearer: world.a.apiKey, ...body }, query);
        t.true(
          res.status === (portal ? 201 : 200),
          `${routeName(route)}${query}: ${res.status} ${res.text.slice(0, 200)}`,
        );
        for (const id of idsOfB())
          t.false(res.text.includes(id), `${routeName(route)}${query} shows customer B's ${id}`);
      }
    });
  }
}

const invalidCronSecret: Expectation = { status: 401, code: 'invalid_cron_secret' };
for (const route of routesOf('cron')) {
  test.serial(`cron ${routeName(route)}: refused without the right X-Cron-Secret, and opens with it`, async (t) => {
    await assertRefused(t, route, [
      [{ name: 'no credentials', options: {} }, invalidCronSecret],
      [{ name: 'a wrong secret', options: { headers: { 'x-cron-secret': 'wrong' } } }, invalidCronSecret],
      [
        { name: 'the secret with one more character', options: { headers: { 'x-cron-secret': `${CRON_SECRET}x` } } },
        invalidCronSecret,
      ],
      [
        { name: 'the secret cut short', options: { headers: { 'x-cron-secret': CRON_SECRET.slice(0, -1) } } },
        invalidCronSecret,
      ],
      [
        { name: 'the secret in upper case', options: { headers: { 'x-cron-secret': CRON_SECRET.toUpperCase() } } },
        invalidCronSecret,
      ],
      [{ name: 'the secret as a Bearer token', options: { bearer: CRON_SECRET } }, invalidCronSecret],
      [{ name: 'the admin session cookie', options: { cookie: cookies.admin } }, invalidCronSecret],
      [{ name: 'an API key', options: { bearer: world.a.apiKey } }, invalidCronSecret],
    ]);
    const res = await call(route, wellFormedParams(route), { headers: { 'x-cron-secret': CRON_SECRET } });
    t.true(
      res.status >= 200 && res.status < 300,
      `${routeName(route)} with the secret: ${res.status} ${res.text.slice(0, 200)}`,
    );
  });
}

// Every provider's signature header with a value that cannot verify.
const FORGED_SIGNATURES = {
  'provider_a-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`,
  'x-callback-token': 'forged-token',
  'x-signature': '0'.repeat(64),
};
const invalidSignature: Expectation = { status: 400, code: 'invalid_signature' };
for (const route of routesOf('provider')) {
  test.serial(
    `provider ${routeName(route)}: refused without a valid signature, whatever else is sent, and nothing is stored`,
    async (t) => {
      await assertRefused(t, route, [
        [{ name: 'no signature', options: {} }, invalidSignature],
        [{ name: 'forged signatures', options: { headers: FORGED_SIGNATURES } }, invalidSignature],
        [{ name: 'the admin session cookie', options: { cookie: cookies.admin } }, invalidSignature],
        [{ name: 'an API key', options: { bearer: world.a.apiKey } }, invalidSignature],
        [{ name: 'the cron secret', options: { headers: { 'x-cron-secret': CRON_SECRET } } }, invalidSignature],
      ]);
    },
  );
}

// What any route may answer beyond its documented statuses (D-1): bad input, unknown id, body limits, rate limits.
const GENERIC_STATUSES = new Set([400, 404, 413, 415, 429]);
for (const route of routesOf('public')) {
  test.serial(`public ${routeName(route)}: needs no credentials and answers only documented statuses`, async (t) => {
    const res = await call(route, wellFormedParams(route), {});
    const documented = new Set(Object.keys(route.responses).map(Number));
    t.true(
      documented.has(res.status) || GENERIC_STATUSES.has(res.status),
      `${routeName(route)}: undocumented ${res.status} ${res.text.slice(0, 200)}`,
    );
    t.true(res.status < 500, `${routeName(route)}: ${res.status}`);
    if (res.status >= 400) t.deepEqual(errorShapeProblems(res), []);
    t.is(undeclaredErrorProblem(route, res), undefined);
    if (res.status === 401 || res.status === 403)
      t.true(documented.has(res.status), `${routeName(route)} asks for credentials it does not document`);
  });
}
