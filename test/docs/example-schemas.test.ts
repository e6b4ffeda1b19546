/**
 * D-94: every operation shows an example of its request body and of each success answer, taken from the
 * zod schemas' metadata (`.meta({ examples })`), and every example is valid against the very schema that
 * parses the request or describes the answer. examples.test.ts then sends the requests to the service.
 */
import test from 'ava';
import { buildOpenApi } from '../../src/docs/openapi.ts';
import type { AnyRoute } from '../../src/http/route.ts';
import { allRoutes } from '../../src/web/routes.ts';

type Media = Record<string, { example?: unknown }>;
type Operation = { requestBody?: { content: Media }; responses: Record<string, { content?: Media }> };
const document = buildOpenApi(allRoutes) as { paths: Record<string, Record<string, Operation>> };
const name = (route: AnyRoute) => `${route.method.toUpperCase()} ${route.path}`;
const operationOf = (route: AnyRoute) => document.paths[route.path.replace(/:(\w+)/g, '{$1}')]![route.method]!;

test('every request body has an example that its zod schema accepts', (t) => {
  let bodies = 0;
  for (const route of allRoutes) {
    const schema = route.body ?? route.rawBody?.schema;
    const media = operationOf(route).requestBody?.content['application/json'];
    t.is(Boolean(media), Boolean(schema), `${name(route)}: a body schema without a documented body, or the reverse`);
    if (!schema) continue;
    bodies += 1;
    t.not(media?.example, undefined, `${name(route)}: no request example`);
    const parsed = schema.safeParse(media?.example);
    t.true(parsed.success, `${name(route)}: its example is refused: ${parsed.error?.message}`);
  }
  t.true(bodies >= 30, `only ${bodies} request bodies`);
});

test('every success answer has a schema and an example that the schema accepts', (t) => {
  for (const route of allRoutes) {
    for (const [status, doc] of Object.entries(route.responses)) {
      if (Number(status) >= 300 || Number(status) === 204) continue;
      const label = `${name(route)} ${status}`;
      const content = operationOf(route).responses[status]?.content ?? {};
      t.true(Object.keys(content).length > 0, `${label}: no content`);
      // Text, PDF and HTML answers are strings: their example would say nothing.
      if (!doc.schema) {
        t.truthy(doc.contentType, `${label}: a JSON answer without a schema`);
        continue;
      }
      const example = content['application/json']?.example;
      t.not(example, undefined, `${label}: no example`);
      const parsed = doc.schema.safeParse(example);
      t.true(parsed.success, `${label}: its example is refused: ${parsed.error?.message}`);
    }
  }
});
