/** SQL of `login_failures`: the login attempts being checked and the failed ones (D-16, issue 20, issue 33). */
import type { Db } from '../db/knex.ts';
import type { LoginFailureStats } from './login-throttle-rules.ts';

/**
 * Serialises login attempts of one email and of one IP (until the transaction ends), in every process: the
 * email's lock is always taken before the IP's, so two attempts never wait on each other in a circle.
 */
export async function lockLoginAttempts(trx: Db, email: string, ip: string): Promise<void> {
  await trx.raw(
    'select pg_advisory_xact_lock(hashtext(?), hashtext(?)), pg_advisory_xact_lock(hashtext(?), hashtext(?))',
    ['login_failures.email', email.toLowerCase(), 'login_failures.ip', ip],
  );
}

/** An attempt whose password is about to be checked: pending until it proves a failure (markLoginFailed). */
export async function insertLoginAttempt(db: Db, email: string, ip: string): Promise<string> {
  const [row] = await db('login_failures').insert({ email: email.toLowerCase(), ip, pending: true }).returning('id');
  return String((row as { id: string | number }).id);
}

export async function deleteLoginFailure(db: Db, id: string): Promise<void> {
  await db('login_failures').where({ id }).delete();
}

/** The pending attempt was wrong credentials: from now on it is a failure. */
export async function markLoginFailed(db: Db, id: string): Promise<void> {
  await db('login_failures').where({ id }).update({ pending: false });
}

interface StatsRow {
  address_failures: number;
  address_pending: number;
  account_failures: number;
  account_pending: number;
  account_latest: Date | null;
  account_addresses: number;
  account_pending_addresses: number;
  pair_failures: number;
  pair_pending: number;
  pair_latest: Date | null;
}

/**
 * What the throttle decides on, in one statement over the window: the address's failures (any email), the
 * account's (any address) with how many addresses they came from, and this address's for this account. A
 * pending attempt older than `pendingSince` was abandoned (its process died mid-check) and no longer counts.
 */
export async function loginFailureStats(
  db: Db,
  email: string,
  ip: string,
  since: Date,
  pendingSince: Date,
): Promise<LoginFailureStats> {
  const bindings = { email: email.toLowerCase(), ip, since, pendingSince };
  const result = await db.raw<{ rows: StatsRow[] }>(
    `select count(*) filter (where ip = :ip and not pending)::int as address_failures,
            count(*) filter (where ip = :ip and pending and created_at > :pendingSince)::int as address_pending,
            count(*) filter (where email = :email and not pending)::int as account_failures,
            count(*) filter (where email = :email and pending and created_at > :pendingSince)::int as account_pending,
            max(created_at) filter (where email = :email and not pending) as account_latest,
            count(distinct ip) filter (where email = :email and not pending)::int as account_addresses,
            count(distinct ip) filter (where email = :email and pending and created_at > :pendingSince)::int
              as account_pending_addresses,
            count(*) filter (where email = :email and ip = :ip and not pending)::int as pair_failures,
            count(*) filter (where email = :email and ip = :ip and pending and created_at > :pendingSince)::int
              as pair_pending,
            max(created_at) filter (where email = :email and ip = :ip and not pending) as pair_latest
       from login_failures
      where created_at > :since and (email = :email or ip = :ip)`,
    bindings,
  );
  const row = result.rows[0]!;
  return {
    address: { failures: row.address_failures, pending: row.address_pending },
    account: {
      failures: row.account_failures,
      pending: row.account_pending,
      latest: row.account_latest,
      addresses: row.account_addresses,
      pendingAddresses: row.account_pending_addresses,
    },
    pair: { failures: row.pair_failures, pending: row.pair_pending, latest: row.pair_latest },
  };
}

/**
 * The time of the n-th most recent failure for an email or an IP since `since`: once it leaves the
 * window fewer than n remain, so it tells when a throttled client may try again.
 */
export async function nthLatestLoginFailure(
  db: Db,
  by: 'email' | 'ip',
  value: string,
  since: Date,
  n: number,
): Promise<Date | undefined> {
  const row = await db('login_failures')
    .where(by, by === 'email' ? value.toLowerCase() : value)
    .where('created_at', '>', since)
    .where('pending', false)
    .orderBy('created_at', 'desc')
    .offset(n - 1)
    .first('created_at');
  return row?.created_at;
}

/**
 * A success forgets the failures of its own address for that email (its user's typos), not those of other
 * addresses: someone else's guesses keep counting against them (issue 33).
 */
export async function clearLoginFailures(db: Db, email: string, ip: string): Promise<void> {
  // Other attempts still being checked stay: each ends as a failure or is removed by its own request.
  await db('login_failures').where({ email: email.toLowerCase(), ip, pending: false }).delete();
}
