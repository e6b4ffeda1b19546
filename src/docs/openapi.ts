import { z } from 'zod';
import type { ErrorCode } from '../errors.ts';
import { routeErrorsByStatus } from '../http/route-errors.ts';
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
          details: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } } },
        },
      },
    },
  };
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

function parameters(schema: z.ZodType | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  const json = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: s,
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
    const own = doc.schema ? jsonSchema(doc.schema, 'output') : undefined;
    const error = codes ? errorSchema(codes) : Number(status) >= 400 ? errorSchema() : undefined;
    const schema = own && error && codes ? { anyOf: [own, error] } : (own ?? error);
    responses[status] = { description: doc.description, ...(schema ? { content: { [doc.contentType ?? 'application/json']: { schema } } } : {}) };
  }
  return responses;
}

/** The OpenAPI 3.1 document, generated from the same route definitions and zod schemas that serve requests (D-8). */
export function buildOpenApi(routes: AnyRoute[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    const params = [...parameters(route.params, 'path'), ...parameters(route.query, 'query')];
    if (usesIdempotency(route)) {
      params.push({ name: 'Idempotency-Key', in: 'header' as 'query', required: false, schema: { type: 'string', maxLength: 255 } });
    }
    const responses = responsesOf(route);
    (paths[path] ??= {})[route.method] = {
      tags: [route.tag],
      summary: route.summary,
      operationId: `${route.method}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      security: SECURITY[route.auth],
      'x-auth': route.auth,
      parameters: params,
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Billing service', version: '1.0.0', description: 'Admin API (session cookie), public v1 API (API key), license endpoints, webhooks and cron.' },
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
