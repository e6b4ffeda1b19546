import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { renderDocsPage } from './docs-page.ts';
import { buildOpenApi } from './openapi.ts';

/** /api/openapi.json and /docs, describing `routes` and themselves. */
export function docsRoutes(routes: AnyRoute[]): AnyRoute[] {
  const own: AnyRoute[] = [
    defineRoute({
      method: 'get',
      path: '/api/openapi.json',
      auth: 'public',
      tag: 'Operations',
      summary: 'This OpenAPI 3.1 document',
      responses: {
        200: {
          description: 'OpenAPI document',
          schema: z
            .looseObject({
              openapi: z.literal('3.1.0'),
              info: z.looseObject({}),
              paths: z.record(z.string(), z.unknown()),
            })
            .meta({
              examples: [{ openapi: '3.1.0', info: { title: 'Billing service', version: '1.0.0' }, paths: {} }],
            }),
        },
      },
      errors: [],
      handler: async () => ({ body: document }),
    }),
    defineRoute({
      method: 'get',
      path: '/docs',
      auth: 'public',
      tag: 'Operations',
      summary: 'Human-readable API reference (Swagger UI over /api/openapi.json)',
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
      errors: [],
      handler: async () => ({ body: page, headers: { 'Content-Type': 'text/html; charset=utf-8' } }),
    }),
  ];
  const all = [...routes, ...own];
  const document = buildOpenApi(all);
  const page = renderDocsPage();
  return own;
}
