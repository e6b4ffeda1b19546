import type { Context } from 'koa';
import type { Page } from '../db/paginate.ts';
import type { Reply } from './route.ts';

/** A list answer: the JSON array, plus `Link: rel="next"` when more rows exist (D-5). */
export function listReply<T extends { id: string }, O>(ctx: Context, page: Page<T>, serialise: (row: T) => O): Reply {
  const headers: Record<string, string> = {};
  const last = page.rows.at(-1);
  if (page.hasMore && last) {
    const next = new URL(ctx.originalUrl, 'http://placeholder');
    next.searchParams.set('startingAfter', last.id);
    headers.Link = `<${next.pathname}${next.search}>; rel="next"`;
  }
  return { status: 200, body: page.rows.map(serialise), headers };
}
