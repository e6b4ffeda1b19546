import pg from 'pg';

/**
 * Profiling aid, not for tests (a test asserts behaviour, not how many queries it took): the query texts this
 * process sends to PostgreSQL (pg's Client.query, whatever pool or raw connection sends them) while `work` runs,
 * seen on the wire rather than through knex's events.
 */
export async function queriesDuring(work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    seen.push(typeof first === 'string' ? first : (first.text ?? ''));
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = query as typeof pg.Client.prototype.query;
  }
  return seen;
}
