import { fastQuery } from '../db/fast-query.ts';
import type { Db } from '../db/knex.ts';

export interface Lease {
  /** Epoch ms at which the key's current window ends (the clock of the process that opened it). */
  windowEndMs: number;
  /** Tokens granted by this lease (0: the window's limit is spent). */
  granted: number;
}

/**
 * Leases up to `wanted` tokens of `key`'s current window in one atomic statement, opening a new window of
 * `windowMs` when none is live at `nowMs`. A lease never takes more than half of what is left (rounded up), so
 * the last tokens of a window go out in ever smaller leases and few stay unspent in other processes; the sum
 * granted in a window never exceeds `limit`. A refused lease still answers the window's end (for Retry-After).
 */
export async function leaseTokens(
  db: Db,
  key: string,
  wanted: number,
  limit: number,
  windowMs: number,
  nowMs: number,
): Promise<Lease> {
  const [row] = await fastQuery<{ window_end_ms: number; granted: number }>(
    db,
    `insert into rate_limit_windows as w (key, window_end_ms, used, granted)
     values ($1, $2::bigint + $3::bigint, least($4::int, ($5::int + 1) / 2), least($4::int, ($5::int + 1) / 2))
     on conflict (key) do update set
       window_end_ms = case when w.window_end_ms <= $2::bigint then excluded.window_end_ms else w.window_end_ms end,
       used = case when w.window_end_ms <= $2::bigint then excluded.used
                   else w.used + least($4::int, (greatest(0, $5::int - w.used) + 1) / 2) end,
       granted = case when w.window_end_ms <= $2::bigint then excluded.granted
                      else least($4::int, (greatest(0, $5::int - w.used) + 1) / 2) end
     returning window_end_ms, granted`,
    [key, nowMs, windowMs, wanted, limit],
    'rate-limit.lease',
  );
  return { windowEndMs: Number(row!.window_end_ms), granted: row!.granted };
}

/** Deletes windows that ended before `nowMs` (set-wise; the housekeeping job). */
export async function deleteEndedWindows(db: Db, nowMs: number): Promise<number> {
  return db('rate_limit_windows').where('window_end_ms', '<', nowMs).delete();
}
