import { z } from 'zod';
import type { ErrorCode } from '../errors.ts';
import { refusesUnknownInput, routeErrorsByStatus } from '../http/route-errors.ts';
import { idempotencyKey } from '../idempotency/key.ts';
import { STATED_RULES } from './stated-rules.ts';
import { usesIdempotency, type AnyRoute, type AuthKind, type RouteResponseDoc } from '../http/route.ts';

const SECURITY: Record<AuthKind, Record<string, string[]>[]> = {
  admin: [{ session: [] }],
  apiKey: [{ apiKey: [] }],
  cron: [{ cronSecret: [] }],
  provider: [],
  public: [],
};

/** The D-1 error body; with `codes`, `error.code` is one of them. */
function errorSchema(codes?: readonly ErrorCode[]) {
  return {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: codes ? { type: 'string', enum: codes } : { type: 'string' },
          message: { type: 'string' },
          details: {
            type: 'array',
            items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } },
          },
        },
      },
    },
  };
}

/**
 * The service's patterns are JavaScript regular expressions without the `u` flag, where `\\d` is `[0-9]`; a
 * JSON Schema reader (Python's `re`, ICU) reads `\\d` as any Unicode digit, which the service refuses. So the
 * document spells the class out.
 */
function asciiDigits(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(asciiDigits);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === 'pattern' && typeof value === 'string' ? value.replace(/\\d/g, '[0-9]') : asciiDigits(value),
    ]),
  );
}

/** Whether a zod schema is an object that names all its fields (no catchall): one whose other fields are refused. */
const isClosedObject = (schema: z.ZodType) => {
  const def = (schema as unknown as { _zod: { def: { type: string; catchall?: unknown } } })._zod.def;
  return def.type === 'object' && def.catchall === undefined;
};

/**
 * The JSON Schema of a zod schema. A request's objects are `closed` when the route refuses the fields they do not
 * name (D-90, http/unknown-fields.ts): zod states that only of an answer's objects, so the document says it here.
 */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output', closed = false): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      if (io !== 'input') return;
      if (closed && isClosedObject(zodSchema as unknown as z.ZodType)) jsonSchema.additionalProperties = false;
      Object.assign(jsonSchema, STATED_RULES.get(zodSchema as unknown as z.ZodType));
    },
  }) as Record<string, unknown>;
  return asciiDigits(rest) as Record<string, unknown>;
}

/**
 * The example of a body (D-94), from its zod schema's metadata (`.meta({ examples: [...] })`), read from the
 * registry because z.toJSONSchema drops the examples of a transforming schema from its input side; a list
 * whose items carry an example gets a list of that one item, so list and item never disagree.
 */
function exampleOf(schema: z.ZodType | undefined): unknown {
  if (!schema) return undefined;
  const examples = z.globalRegistry.get(schema)?.examples as unknown[] | undefined;
  if (examples?.length) return examples[0];
  if (!(schema instanceof z.ZodArray)) return undefined;
  const item = exampleOf(schema.element as z.ZodType);
  return item === undefined ? undefined : [item];
}

/** A media type object: the schema and, when the zod schema's metadata has one, the example. */
function content(contentType: string, json: Record<string, unknown>, schema?: z.ZodType) {
  const example = exampleOf(schema);
  return { [contentType]: { schema: json, ...(example === undefined ? {} : { example }) } };
}

/** A body that is not JSON (a PDF, Prometheus text, the HTML page) is a string; a PDF a binary one. */
const textSchema = (contentType: string) =>
  contentType === 'application/pdf' ? { type: 'string', format: 'binary' } : { type: 'string' };

function parameters(schema: z.ZodType | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  const json = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: s,
    // A required query parameter shows its example (D-94), so a request can be built from the page alone.
    ...(((s as { examples?: unknown[] }).examples ?? []).length
      ? { example: (s as { examples: unknown[] }).examples[0] }
      : {}),
  }));
}

/**
 * The documented answers, and for every error status the route can answer (route-errors.ts) an error body
 * whose code is one of the codes with that status; a status the route did not document gets the codes as
 * its description. A documented body of its own (D-33's license_not_found) stays, beside the error body.
 */
function responsesOf(route: AnyRoute): Record<string, unknown> {
  const errors = routeErrorsByStatus(route);
  const docs: Record<number, RouteResponseDoc> = { ...route.responses };
  for (const [status, codes] of errors) docs[status] ??= { description: codes.join(', ') };
  const responses: Record<string, unknown> = {};
  for (const [status, doc] of Object.entries(docs)) {
    const codes = errors.get(Number(status));
    const contentType = doc.contentType ?? 'application/json';
    const own = doc.schema
      ? jsonSchema(doc.schema, 'output')
      : doc.contentType
        ? textSchema(doc.contentType)
        : undefined;
    const error = codes ? errorSchema(codes) : Number(status) >= 400 ? errorSchema() : undefined;
    const schema = own && error && codes ? { anyOf: [own, error] } : (own ?? error);
    responses[status] = {
      description: doc.description,
      ...(schema ? { content: content(contentType, schema, doc.schema) } : {}),
    };
  }
  return responses;
}

/** What a newcomer needs before the first request (D-1 to D-6), shown at the top of `/docs`. */
const DESCRIPTION = [
  'Admin API (`/api/...`), the customer-facing v1 API (`/api/v1/...`), license checks, provider webhooks and cron.',
  '',
  '**Authentication.** `POST /api/auth/login` with `{"email", "password"}` sets the `session` cookie; send it ' +
    'with every admin request',
  '(in a browser it is sent for you, so "Try it out" works once you are logged in). The v1 API takes ' +
    '`Authorization: Bearer <API key>`',
  '(create a key with `POST /api/api-keys`; its secret is shown once). Cron takes `X-Cron-Secret`; provider ' +
    'webhooks their own signature header.',
  '',
  '**Errors** are `{"error": {"code", "message", "details": [{"path", "message"}]}}`; `code` is one of the codes ' +
    'listed under each status,',
  'and a 400 `invalid_request` names each bad field in `details[].path`. Unknown fields are refused, not ignored;',
  'so is a body of `null` (send no body instead). A method a path does not take is a 405 `method_not_allowed`, ' +
    'with `Allow`.',
  '',
  '**Paging.** Lists answer a JSON array in creation order: `limit` (1-500, default 100) and `startingAfter=<last ' +
    'id>`; a',
  '`Link: <...>; rel="next"` header is present while more rows exist.',
  '',
  '**Idempotency.** Admin and v1 POSTs take an `Idempotency-Key` header: the same key with the same request ' +
    'answers the first',
  'answer again; with another request it is a 409 `idempotency_key_reused`, while the first is still running a ' +
    '409 `request_in_progress`.',
  '',
  '**Money** is a decimal string in the currency\'s unit (`"19.99"` USD), never a number, with no more decimals ' +
    'than the currency has;',
  'currencies are ISO 4217 codes. Timestamps are ISO 8601 UTC (`2026-01-31T12:00:00.000Z`); in requests ' +
    '`YYYY-MM-DD` is accepted too.',
].join('\n');

/** `/api/billing/invoices/:id` → `ApiBillingInvoicesId`: the path's words run together, for an operationId. */
const camelPath = (path: string) =>
  path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''));

/** The OpenAPI 3.1 document, generated from the same route definitions and zod schemas that serve requests (D-8). */

export function buildOpenApi(routes: AnyRoute[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    const params: Record<string, unknown>[] = [
      ...parameters(route.params, 'path'),
      ...parameters(route.query, 'query'),
    ];
    if (usesIdempotency(route)) {
      params.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        // No example value: /docs's "Try it out" fills a parameter's example in, and one key shared by every operation
        // (and every reader) would answer the second create with idempotency_key_reused.
        description:
          'A new unique string per intended action, such as a UUID (optional; leave it empty when trying a ' +
          'request here): a retry with the same key and request answers the first answer again (D-6)',
        schema: jsonSchema(idempotencyKey, 'input'),
      });
    }
    for (const header of route.headers ?? [])
      params.push({
        name: header.name,
        in: 'header',
        required: header.required,
        schema: { type: 'string', description: header.description },
      });
    const bodySchema: z.ZodType | undefined = route.body ?? route.rawBody?.schema;
    const responses = responsesOf(route);
    const operations = paths[path] ?? {};
    paths[path] = operations;
    operations[route.method] = {
      tags: [route.tag],
      summary: route.summary,
      operationId: `${route.method}${camelPath(route.path)}`,
      security: SECURITY[route.documentedAuth ?? route.auth],
      'x-auth': route.auth,
      parameters: params,
      ...(bodySchema
        ? {
            requestBody: {
              required: true,
              ...(route.rawBody ? { description: route.rawBody.description } : {}),
              // The code a body answers when its only problems are fields the schema does not name (D-90).
              ...(route.unknownFieldCode ? { 'x-unknown-field-code': route.unknownFieldCode } : {}),
              content: content(
                'application/json',
                jsonSchema(bodySchema, 'input', refusesUnknownInput(route)),
                bodySchema,
              ),
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Billing service', version: '1.0.0', description: DESCRIPTION },
    components: {
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: 'session' },
        apiKey: { type: 'http', scheme: 'bearer' },
        cronSecret: { type: 'apiKey', in: 'header', name: 'X-Cron-Secret' },
      },
      schemas: { Error: errorSchema() },
    },
    paths,
  };
}
