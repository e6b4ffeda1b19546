import type { Db } from '../db/knex.ts';
import { purgeEndedRateLimitWindows } from '../http/rate-limit.ts';
import { purgeEndedPortalRows } from '../portal/sessions.ts';
import { deleteExpiredTestClocks } from '../test-clocks/service.ts';

export const IDEMPOTENCY_RETENTION_HOURS = 24;
const LOGIN_FAILURE_RETENTION_HOURS = 24;

export interface PurgeCounts {
  sessions: number;
  idempotencyKeys: number;
  loginFailures: number;
  rateLimitWindows: number;
  /** Ended portal links, sessions and sign-in codes (issue 37). */
  portalRows: number;
  /** Test clocks past their `deletesAfter`, deleted with their customers' records (TC-1). */
  testClocks: number;
}

export async function purgeExpired(db: Db, asOf: Date): Promise<PurgeCounts> {
  const hoursAgo = (h: number) => new Date(asOf.getTime() - h * 3600_000);
  const sessions = await db('sessions').where('expires_at', '<=', asOf).delete();
  const idempotencyKeys = await db('idempotency_keys')
    .where('created_at', '<', hoursAgo(IDEMPOTENCY_RETENTION_HOURS))
    .delete();
  const loginFailures = await db('login_failures')
    .where('created_at', '<', hoursAgo(LOGIN_FAILURE_RETENTION_HOURS))
    .delete();
  // Shared rate-limit windows end within minutes; a key seen again reuses its row, the others are dropped here.
  const rateLimitWindows = await purgeEndedRateLimitWindows(db, asOf.getTime());
  const portalRows = await purgeEndedPortalRows(db, asOf);
  const testClocks = await deleteExpiredTestClocks(db, asOf);
  return { sessions, idempotencyKeys, loginFailures, rateLimitWindows, portalRows, testClocks };
}
