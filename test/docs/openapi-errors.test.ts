/**
 * The error answers the OpenAPI document publishes (D-1, D-8): every error status of every operation names
 * its codes as an enum drawn from the closed list, each code under the status it answers with; the codes
 * every route answers because of its shape are there; each route's own codes are there and are its own.
 * The security suites check, request by request, that the running app keeps to these lists.
 */
import test from 'ava';
import { buildOpenApi } from '../../src/docs/openapi.ts';
import { ERROR_CODES, type ErrorCode } from '../../src/errors.ts';
import { errorStatus } from '../../src/http/error-status.ts';
import type { AnyRoute } from '../../src/http/route.ts';
import { plumbingErrors } from '../../src/http/route-errors.ts';
import { allRoutes } from '../../src/web/routes.ts';

type Schema = { anyOf?: Schema[]; properties?: { error?: { properties?: { code?: { enum?: string[] } } } } };
type Operation = {
  'x-auth': string;
  parameters: { name: string; in: string }[];
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
};

const document = buildOpenApi(allRoutes) as { paths: Record<string, Record<string, Operation>> };
const name = (route: AnyRoute) => `${route.method.toUpperCase()} ${route.path}`;
const operationOf = (route: AnyRoute) => document.paths[route.path.replace(/:(\w+)/g, '{$1}')]![route.method]!;

/** The enum of `error.code` in a response, also when it stands beside a body of the route's own (anyOf). */
function codesOf(response: Operation['responses'][string] | undefined): string[] | undefined {
  const schema = response?.content?.['application/json']?.schema;
  for (const candidate of schema?.anyOf ?? (schema ? [schema] : [])) {
    const codes = candidate.properties?.error?.properties?.code?.enum;
    if (codes) return codes;
  }
  return undefined;
}

/** Every code the document publishes for the operation. */
const publishedCodes = (operation: Operation) => Object.values(operation.responses).flatMap((r) => codesOf(r) ?? []);

const operations = allRoutes.map((route) => [route, operationOf(route)] as const);

test('every error response lists its codes as an enum of the closed list, each answering with that status', (t) => {
  let responses = 0;
  for (const [route, operation] of operations) {
    for (const [status, response] of Object.entries(operation.responses)) {
      if (Number(status) < 400) continue;
      const codes = codesOf(response);
      // D-33's unknown license key answers a body of its own, not a D-1 error.
      if (!codes && route.responses[Number(status)]?.schema) continue;
      const label = `${name(route)} ${status}`;
      t.truthy(codes?.length, `${label}: no enum of codes`);
      for (const code of codes ?? []) {
        t.true((ERROR_CODES as readonly string[]).includes(code), `${label}: ${code} is not in ERROR_CODES`);
        t.is(
          errorStatus[code as ErrorCode],
          Number(status),
          `${label}: ${code} answers ${errorStatus[code as ErrorCode]}`,
        );
      }
      t.is(new Set(codes).size, codes?.length ?? 0, `${label}: a code twice`);
      responses += 1;
    }
  }
  t.true(responses > allRoutes.length * 2, `only ${responses} error responses`);
});

test('every operation publishes the codes its shape brings (D-1 plumbing, auth, D-6 idempotency)', (t) => {
  // Stated from the document itself, apart from src/http/route-errors.ts which derives them from the route.
  const byAuth: Record<string, ErrorCode[]> = {
    admin: ['unauthenticated', 'forbidden'],
    apiKey: ['unauthenticated'],
    cron: ['invalid_cron_secret'],
    provider: ['invalid_signature'],
    public: [],
  };
  for (const [route, operation] of operations) {
    const published = new Set(publishedCodes(operation));
    const expected: ErrorCode[] = ['internal_error', 'unavailable', ...byAuth[operation['x-auth']]!];
    const where = new Set(operation.parameters.map((p) => p.in));
    if (where.has('path')) expected.push('not_found');
    if (where.has('query')) expected.push('invalid_request');
    if (route.method === 'post' || route.method === 'put')
      expected.push('invalid_request', 'payload_too_large', 'unsupported_media_type');
    if (operation.parameters.some((p) => p.name === 'Idempotency-Key'))
      expected.push('idempotency_key_reused', 'request_in_progress');
    for (const code of new Set([...expected, ...plumbingErrors(route)]))
      t.true(published.has(code), `${name(route)}: ${code} missing`);
  }
});

test("every route's own codes are published under their status, and each documented error status has codes", (t) => {
  for (const [route, operation] of operations) {
    for (const code of route.errors)
      t.true(
        codesOf(operation.responses[errorStatus[code]])?.includes(code),
        `${name(route)}: ${code} not under ${errorStatus[code]}`,
      );
    for (const [status, doc] of Object.entries(route.responses)) {
      if (Number(status) >= 400 && !doc.schema)
        t.truthy(
          codesOf(operation.responses[status]),
          `${name(route)} documents ${status}, which none of its codes answers`,
        );
    }
  }
});

test('a route declares only its own codes: none that its shape already brings, none twice', (t) => {
  for (const route of allRoutes) {
    const plumbing = new Set(plumbingErrors(route));
    t.deepEqual(
      route.errors.filter((code) => plumbing.has(code)),
      [],
      `${name(route)} repeats codes its shape brings`,
    );
    t.is(new Set(route.errors).size, route.errors.length, `${name(route)} names a code twice`);
  }
});

test(
  'the Idempotency-Key parameter has no example, ' + 'so "Try it out" in /docs does not send one key for every create',
  (t) => {
    const keys = operations.flatMap(([, operation]) =>
      operation.parameters.filter((p) => p.name === 'Idempotency-Key'),
    );
    t.true(keys.length > 10);
    for (const key of keys) t.false('example' in key);
  },
);
