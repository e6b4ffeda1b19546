/**
 * The files `/docs` loads (D-94): Swagger UI from `node_modules/swagger-ui-dist` and our start-up script,
 * never from a CDN. Only the names listed here are served.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Context, Next } from 'koa';

const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const FILES: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: path.join(swaggerDir, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': {
    file: path.join(swaggerDir, 'swagger-ui-bundle.js'),
    type: 'text/javascript; charset=utf-8',
  },
  'docs.js': { file: new URL('./assets/docs.js', import.meta.url).pathname, type: 'text/javascript; charset=utf-8' },
};

const PREFIX = '/docs/assets/';
const cache = new Map<string, Buffer>();

/** Answers `GET /docs/assets/<name>` for the listed files; everything else passes on. */
export function docsAssets(ctx: Context, next: Next): Promise<void> {
  // Not async itself: every other request passes through without a promise of its own (issue 20).
  if (ctx.method !== 'GET' || !ctx.path.startsWith(PREFIX)) return next();
  const asset = FILES[ctx.path.slice(PREFIX.length)];
  if (!asset) return next();
  return serveAsset(ctx, asset);
}

async function serveAsset(ctx: Context, asset: { file: string; type: string }): Promise<void> {
  let body = cache.get(asset.file);
  if (!body) {
    body = await readFile(asset.file);
    cache.set(asset.file, body);
  }
  ctx.type = asset.type;
  ctx.set('Cache-Control', 'public, max-age=3600');
  ctx.body = body;
}
