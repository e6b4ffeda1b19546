/**
 * The running app the hostile-input tests talk to, with what they need around each request: the right
 * credential for the route's auth kind, the route's published schemas, the oracle of what the answer must
 * be, the check of the answer (no 5xx, D-1 shape, a code the route declares, named fields, no changed row when
 * refused) and the counts.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import querystring from 'node:querystring';
import fc from 'fast-check';
import type { z } from 'zod';
import { BODY_LIMIT_BYTES } from '../../src/http/body.ts';
import type { AnyRoute } from '../../src/http/route.ts';
import { unknownFieldPaths } from '../../src/http/unknown-fields.ts';
import { issuesToDetails } from '../../src/http/validate.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { startFakeProviders, type FakeProviderA } from '../helpers/fake-providers.ts';
import { request, type JsonResponse, type RequestOptions } from '../helpers/http.ts';
import { undeclaredErrorProblem } from './declared-errors.ts';
import { detailPaths, errorShapeProblems } from './error-shape.ts';
import { changedTables, fingerprintQuery, type Fingerprint } from './fingerprint.ts';
import { conforming, serialise, type JsonSchema } from './schema-arbitraries.ts';
import { buildWorld, existingParam, pathParamNames, routeName, type World } from './world.ts';

/** C-11: every accepted write of the admin API is an admin action and leaves one audit row. */
const isAdminAction = (route: AnyRoute) => route.auth === 'admin' && route.method !== 'get';

/** The audit log's row count, from its fingerprint (`count:checksum`). */
const auditRows = (fingerprint: Fingerprint) => Number((fingerprint.audit_log ?? '0:').split(':')[0]);

/** Where the hostile input went; `fixed` counts the deterministic cases (limits, media types, D-3, text). */
export type Location = 'body' | 'query' | 'params' | 'fixed';

/** What the answer must be; `paths` are the details[].path a validation error must name. */
export interface Expected {
  status?: number;
  code?: string;
  paths?: string[];
}

type OpenApiOperation = {
  parameters?: { name: string; in: string; required?: boolean; schema: JsonSchema }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
};
type OpenApiDocument = { paths: Record<string, Record<string, OpenApiOperation>> };

const SECRETS = {
  CRON_SECRET: `cron-${randomBytes(12).toString('hex')}`,
  PROVIDER_A_WEBHOOK_SECRET: `whsec_${randomBytes(12).toString('hex')}`,
  PROVIDER_B_CALLBACK_TOKEN: `cbt_${randomBytes(12).toString('hex')}`,
  PROVIDER_C_WEBHOOK_SECRET: `pcs_${randomBytes(12).toString('hex')}`,
};

/** Signatures every provider accepts (interface.md Authentication 5, D-62); each route reads its own header. */
function providerSignatures(text: string): Record<string, string> {
  const t = Math.floor(Date.now() / 1000);
  const providerA = createHmac('sha256', SECRETS.PROVIDER_A_WEBHOOK_SECRET).update(`${t}.${text}`).digest('hex');
  return {
    'provider_a-signature': `t=${t},v1=${providerA}`,
    'x-callback-token': SECRETS.PROVIDER_B_CALLBACK_TOKEN,
    'x-signature': createHmac('sha256', SECRETS.PROVIDER_C_WEBHOOK_SECRET).update(text).digest('hex'),
  };
}

// PostgreSQL cannot store NUL, and an unpaired surrogate cannot be encoded as UTF-8 without changing it.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The paths (joined with dots, after `prefix`) of strings and keys in `value` that cannot be stored as sent. */
function unstorablePaths(value: unknown, prefix: string): string[] {
  const found: string[] = [];
  const stack: [unknown, string[]][] = [[value, prefix ? [prefix] : []]];
  while (stack.length > 0) {
    const [current, path] = stack.pop()!;
    if (typeof current === 'string' && UNSTORABLE.test(current)) found.push(path.join('.'));
    if (current === null || typeof current !== 'object' || current instanceof Date || path.length > 50) continue;
    for (const [key, item] of Object.entries(current)) {
      if (UNSTORABLE.test(key)) found.push([...path, key].join('.'));
      stack.push([item, [...path, key]]);
    }
  }
  return found;
}

/**
 * The expectation for a value that passed or failed `schema`, with details under `prefix`. Fields the
 * published schema marks `x-lookup-text` take any text (their domain reduces it before any lookup).
 */
function expectedFromSchema(
  schema: z.ZodType,
  published: JsonSchema,
  value: unknown,
  prefix: string,
  refused: Expected,
  unknownCode = refused.code,
): Expected {
  // D-90: every field the schema does not name is refused and named, beside what zod refuses.
  const unknown = unknownFieldPaths(schema, value).map((path) =>
    [prefix, ...path.map(String)].filter(Boolean).join('.'),
  );
  const result = schema.safeParse(value);
  if (!result.success)
    return { ...refused, paths: [...unknown, ...issuesToDetails(result.error, prefix).map((d) => d.path)] };
  const anyText = Object.entries(published.properties ?? {})
    .filter(([, p]) => (p as Record<string, unknown>)['x-lookup-text'] === true)
    .map(([k]) => [prefix, k].filter(Boolean).join('.'));
  const unstorable = unstorablePaths(result.data, prefix).filter(
    (p) => !anyText.some((a) => p === a || p.startsWith(`${a}.`)),
  );
  if (unknown.length > 0 && unstorable.length === 0) return { ...refused, code: unknownCode, paths: unknown };
  return unknown.length + unstorable.length > 0 ? { ...refused, paths: [...unknown, ...unstorable] } : {};
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export class FuzzHarness {
  /** Requests by route group and where the hostile input went. */
  readonly counts = new Map<string, Record<Location, number>>();
  readonly routesTried = new Map<string, Set<Location>>();
  /** Answers by class, to show how much hostile input got past validation into the handlers. */
  readonly outcomes = { accepted: 0, invalidRequest: 0, otherRefusal: 0 };
  /** Routes for which no generated value passed zod (their fuzzing still runs, from a base zod refuses). */
  readonly withoutValidBase = new Set<string>();
  #lastFingerprint: Fingerprint = {};

  private constructor(
    readonly app: TestApp,
    /** Payment providers on loopback: accepted checkout bodies reach a provider, never the internet. */
    private readonly providers: FakeProviderA,
    readonly world: World,
    private readonly adminCookie: string,
    private readonly openapi: OpenApiDocument,
    private readonly fingerprint: () => Promise<Fingerprint>,
  ) {}

  static async start(): Promise<FuzzHarness> {
    const providers = await startFakeProviders();
    const app = await startTestApp({
      ...SECRETS,
      PROVIDER_A_API_URL: providers.url,
      PROVIDER_A_SECRET_KEY: providers.secretKey,
      PROVIDER_B_API_URL: providers.url,
      PROVIDER_B_SECRET_KEY: providers.providerBKey,
    });
    const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
    // Hostile login bodies are failed logins and hostile license calls count against the public limit:
    // lift both limits so the run measures input handling, not throttling (tested in test/auth, test/licenses).
    const limits = await request(app.baseUrl, '/api/settings', {
      method: 'PUT',
      cookie,
      body: { 'auth.login_max_failures': 1000, 'licenses.rate_limit_per_minute': 1_000_000 },
    });
    if (limits.status !== 200) throw new Error(`settings: ${limits.status} ${limits.text}`);
    const world = await buildWorld(app, cookie);
    const openapi = (await request(app.baseUrl, '/api/openapi.json')).body as OpenApiDocument;
    const harness = new FuzzHarness(app, providers, world, cookie, openapi, await fingerprintQuery(app.db));
    await harness.resync();
    return harness;
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.providers.close();
  }

  /** Takes a fresh fingerprint: the next refused request must leave the tables exactly so. */
  async resync(): Promise<void> {
    this.#lastFingerprint = await this.fingerprint();
  }

  /** The credential the route's auth kind takes, so hostile input reaches parsing and the handler. */
  credentials(route: AnyRoute, text: string): RequestOptions {
    switch (route.auth) {
      case 'admin':
        return { cookie: this.adminCookie };
      case 'apiKey':
        return { bearer: this.world.a.apiKey };
      case 'cron':
        return { headers: { 'x-cron-secret': SECRETS.CRON_SECRET } };
      case 'provider':
        return { headers: providerSignatures(text) };
      default:
        return {};
    }
  }

  /** Sends `text` as the body (JSON unless `extraHeaders` says otherwise), with the route's credential. */
  send(
    route: AnyRoute,
    path: string,
    text: string | undefined,
    extraHeaders: Record<string, string> = {},
  ): Promise<JsonResponse> {
    const auth = this.credentials(route, text ?? '');
    const headers = {
      ...(text !== undefined ? { 'content-type': 'application/json' } : {}),
      ...auth.headers,
      ...extraHeaders,
    };
    return request(this.app.baseUrl, path, {
      ...auth,
      method: route.method.toUpperCase(),
      headers,
      ...(text !== undefined ? { rawBody: text } : {}),
    });
  }

  /**
   * Checks one answer against D-1 and the expectation, and that a refusal left every table as it was (but for the
   * record of its answer when it was `keyed` with an Idempotency-Key, D-6).
   */
  async check(
    route: AnyRoute,
    location: Location,
    res: JsonResponse,
    expected: Expected,
    sent: string,
    options: { keyed?: boolean } = {},
  ): Promise<void> {
    this.count(route, location, res);
    const after = await this.fingerprint();
    const problems: string[] = [];
    if (res.status >= 500) problems.push(`answered ${res.status}`);
    if (res.status >= 400) {
      // D-1's shape, unless the route documents its own body for that status (D-33: license_not_found).
      const documented = route.responses[res.status]?.schema;
      if (documented) {
        if (!documented.safeParse(res.body).success) problems.push(`does not match the documented ${res.status} body`);
      } else {
        problems.push(...errorShapeProblems(res));
      }
      const changed = changedTables(this.#lastFingerprint, after).filter(
        (table) => !(options.keyed && table === 'idempotency_keys'),
      );
      if (changed.length > 0) problems.push(`refused (${res.status}) but changed ${changed.join(', ')}`);
      const undeclared = undeclaredErrorProblem(route, res);
      if (undeclared) problems.push(undeclared);
    }
    if (res.status < 400 && isAdminAction(route)) {
      const added = auditRows(after) - auditRows(this.#lastFingerprint);
      if (added !== 1)
        problems.push(`accepted but left ${added} audit rows (C-11: an admin action leaves exactly one)`);
    }
    if (expected.status !== undefined && res.status !== expected.status)
      problems.push(`expected ${expected.status}, got ${res.status}`);
    if (expected.code !== undefined && res.body?.error?.code !== expected.code)
      problems.push(`expected code ${expected.code}, got ${res.body?.error?.code}`);
    if (expected.paths) {
      const named = new Set(detailPaths(res));
      const missing = [...new Set(expected.paths)].filter((p) => !named.has(p));
      if (missing.length > 0)
        problems.push(`details do not name ${missing.join(', ')} (named: ${[...named].join(', ')})`);
    }
    this.#lastFingerprint = after;
    if (problems.length > 0) {
      const shown = `${sent.slice(0, 300)}${sent.length > 300 ? `… (${sent.length} chars)` : ''}`;
      throw new Error(
        `${routeName(route)} ${location}: ${problems.join('; ')}\n  sent: ${shown}\n  got: ${res.status} ` +
          `${res.text.slice(0, 300)}`,
      );
    }
  }

  private count(route: AnyRoute, location: Location, res: JsonResponse): void {
    if (res.status < 400) this.outcomes.accepted += 1;
    else if (res.body?.error?.code === 'invalid_request') this.outcomes.invalidRequest += 1;
    else this.outcomes.otherRefusal += 1;
    this.routesTried.set(routeName(route), (this.routesTried.get(routeName(route)) ?? new Set()).add(location));
    const group = this.counts.get(route.tag) ?? { body: 0, query: 0, params: 0, fixed: 0 };
    group[location] += 1;
    this.counts.set(route.tag, group);
  }

  // ---- The route's schemas, as the OpenAPI document publishes them (D-8) ----

  private operation(route: AnyRoute): OpenApiOperation | undefined {
    return this.openapi.paths[route.path.replace(/:(\w+)/g, '{$1}')]?.[route.method];
  }

  bodySchema(route: AnyRoute): JsonSchema {
    return this.operation(route)?.requestBody?.content['application/json']?.schema ?? {};
  }

  parameterSchema(route: AnyRoute, where: 'path' | 'query'): JsonSchema {
    const parameters = (this.operation(route)?.parameters ?? []).filter((p) => p.in === where);
    return {
      type: 'object',
      properties: Object.fromEntries(parameters.map((p) => [p.name, p.schema])),
      required: parameters.filter((p) => p.required).map((p) => p.name),
    };
  }

  /**
   * Existing ids of customer A for body fields of `route` that reference records (`customerId`, `newPlanId`, …).
   * Checkout names an invoice kept payable, so its accepted bodies go on to the (fake) provider.
   */
  idsFor(route: AnyRoute): (field: string) => string | undefined {
    const a = this.world.a;
    const invoice = route.path.startsWith('/api/billing/checkout/') ? a.payableInvoiceId : a.invoiceId;
    const ids: Record<string, string> = {
      customer: a.customerId,
      product: a.productId,
      plan: a.planId,
      invoice,
      payment: a.paymentId,
      subscription: a.subscriptionId,
      license: a.licenseId,
    };
    return (field) => {
      const match = /^(?:new)?(customer|product|plan|invoice|payment|subscription|license)Id$/i.exec(field);
      return match ? ids[match[1]!.toLowerCase()] : undefined;
    };
  }

  /** A value of the schema that zod accepts (plain text, existing ids), for hostile values to be put into. */
  cleanBase(
    route: AnyRoute,
    schema: JsonSchema,
    zodSchema: z.ZodType | undefined,
    seed: number,
    label: string,
  ): unknown {
    const samples = fc.sample(conforming(schema, { plain: true, idFor: this.idsFor(route) }), { seed, numRuns: 300 });
    const valid = samples.find((s) => !zodSchema || zodSchema.safeParse(JSON.parse(serialise(s))).success);
    if (valid === undefined) this.withoutValidBase.add(label);
    return valid ?? samples[0] ?? {};
  }

  /** Path parameters that name existing records of customer A (a random UUID where the world has none). */
  existingParams(route: AnyRoute): Record<string, string> {
    return Object.fromEntries(
      pathParamNames(route).map((n) => [n, existingParam(route, n, this.world, this.world.a) ?? randomUUID()]),
    );
  }

  // ---- Oracles: what the answer to a request must be ----

  expectedForBody(route: AnyRoute, text: string): Expected {
    if (Buffer.byteLength(text) > BODY_LIMIT_BYTES) return { status: 413, code: 'payload_too_large' };
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      return { status: 400, code: 'invalid_request' };
    }
    // A body of null is refused as such (issue 33); no body at all is an empty object.
    if (parsed === null) return { status: 400, code: 'invalid_request' };
    if (!route.body) return {};
    return expectedFromSchema(
      route.body,
      this.bodySchema(route),
      parsed ?? {},
      '',
      { status: 400, code: 'invalid_request' },
      route.unknownFieldCode,
    );
  }

  /** For a route with a query schema; koa reads the query with node's querystring, and so does this. */
  expectedForQuery(route: AnyRoute, qs: string): Expected {
    return expectedFromSchema(route.query!, this.parameterSchema(route, 'query'), querystring.parse(qs), 'query', {
      status: 400,
      code: 'invalid_request',
    });
  }

  /**
   * For a route with path parameters: a malformed id names nothing, 404 (D-1). The router decodes each segment,
   * keeping it when that fails.
   */
  expectedForParams(route: AnyRoute, encoded: Record<string, string>): Expected {
    const decoded = Object.fromEntries(Object.entries(encoded).map(([k, v]) => [k, safeDecode(v)]));
    return {
      ...expectedFromSchema(route.params!, this.parameterSchema(route, 'path'), decoded, 'params', {
        status: 404,
        code: 'not_found',
      }),
      paths: undefined,
    };
  }

  /** The counts per route group, for the test log and the closing note. */
  report(seed: number, scale: number): string {
    const cell = (name: string, n: number) => `${name} ${String(n).padStart(5)}`;
    const lines = [...this.counts.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([group, c]) =>
          `${group.padEnd(16)} ${cell('body', c.body)}  ${cell('query', c.query)}  ${cell('params', c.params)}  ` +
          `${cell('fixed', c.fixed)}`,
      );
    const total = [...this.counts.values()].reduce((sum, c) => sum + c.body + c.query + c.params + c.fixed, 0);
    const { accepted, invalidRequest, otherRefusal } = this.outcomes;
    return (
      `hostile inputs tried (seed ${seed}, scale ${scale}):\n${lines.join('\n')}\ntotal ${total}: ${accepted} ` +
      `accepted (2xx/3xx), ${invalidRequest} invalid_request, ${otherRefusal} other refusals`
    );
  }
}
