import pg from 'pg';
import { AppError } from '../errors.ts';

const RETRY_FOR_MS = 5_000;

/** host:port/database of a connection string, never its password. */
function where(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'the address in DATABASE_URL';
  }
}

/** One line a person can act on, from PostgreSQL's or the network's error code. */
function reason(error: unknown, url: string): string {
  const code = (error as { code?: string }).code;
  const at = where(url);
  switch (code) {
    case '28P01':
    case '28000':
      return `The database at ${at} refused the user or password in DATABASE_URL`;
    case '3D000':
      return `The database ${at} does not exist: create it or fix the name in DATABASE_URL`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `The database host in DATABASE_URL (${at}) is not known: fix DATABASE_URL`;
    default:
      return (
        `Cannot reach the database at ${at} ` +
        `(${code ?? (error instanceof Error ? error.message : String(error))}): start it, or fix DATABASE_URL`
      );
  }
}

/**
 * Connects once to `url`, retrying for `retryForMs` (a database starting beside the service); a database
 * that stays unreachable stops the process with one line naming DATABASE_URL (D-93), not a driver stack.
 */
export async function assertReachable(url: string, retryForMs = RETRY_FOR_MS): Promise<void> {
  const deadline = Date.now() + retryForMs;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => {});
      const code = (error as { code?: string }).code;
      const retryable = code === 'ECONNREFUSED' || code === '57P03' || code === 'ETIMEDOUT';
      if (!retryable || Date.now() > deadline) throw new AppError('setup_failed', reason(error, url));
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
