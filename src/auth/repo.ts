import type { Db } from '../db/knex.ts';
import { readPrepared, type PreparedRead } from '../db/prepared-read.ts';

export interface UserRow {
  id: string;
  email: string;
  password_hash: string | null;
  role: string;
  auth_source: 'local' | 'idp';
  /** The identity provider's issuer and `sub` of the user, once an IdP login is this user (issue 33). */
  idp_issuer: string | null;
  idp_subject: string | null;
  created_at: Date;
}

export interface SessionUserRow {
  session_id: string;
  user_id: string;
  email: string;
  role: string;
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db('users').whereRaw('lower(email) = lower(?)', [email]).first();
}

export async function findUserByIdpSubject(db: Db, issuer: string, subject: string): Promise<UserRow | undefined> {
  return db('users').where({ idp_issuer: issuer, idp_subject: subject }).first();
}

export async function countUsers(db: Db): Promise<number> {
  const row = await db('users').count<{ count: number }>('* as count').first();
  return Number(row?.count ?? 0);
}

export async function insertUser(
  db: Db,
  user: Pick<UserRow, 'email' | 'password_hash' | 'role' | 'auth_source'> &
    Partial<Pick<UserRow, 'idp_issuer' | 'idp_subject'>>,
): Promise<UserRow> {
  const [row] = await db('users').insert(user).returning('*');
  return row as UserRow;
}

export async function updateUser(
  db: Db,
  id: string,
  changes: Partial<Pick<UserRow, 'password_hash' | 'role' | 'auth_source' | 'email' | 'idp_issuer' | 'idp_subject'>>,
): Promise<void> {
  await db('users')
    .where({ id })
    .update({ ...changes, updated_at: db.fn.now() });
}

export async function insertSession(
  db: Db,
  session: { token_hash: string; user_id: string; expires_at: Date; ip: string; user_agent: string | null },
): Promise<string> {
  const [row] = await db('sessions').insert(session).returning('id');
  return (row as { id: string }).id;
}

// Prepared: every admin request reads it (figures in db/prepared-read.ts).
const LIVE_SESSION: PreparedRead = {
  name: 'auth.live-session',
  text: `select s.id as session_id, u.id as user_id, u.email, u.role
           from sessions s join users u on u.id = s.user_id
          where s.token_hash = $1 and s.expires_at > now()`,
};

/** The session behind a token hash, with its user, unless it has expired. Runs before every admin request. */
export async function findLiveSession(db: Db, tokenHash: string): Promise<SessionUserRow | undefined> {
  const [row] = await readPrepared<SessionUserRow>(db, LIVE_SESSION, [tokenHash]);
  return row;
}

export async function deleteSession(db: Db, id: string): Promise<void> {
  await db('sessions').where({ id }).delete();
}

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

/** Records an attempt as a failure up front (it is deleted if the attempt turns out not to be one). */
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

/**
 * Failures, and attempts still being checked, in the window for this email and for this IP. A pending attempt
 * older than `pendingSince` was abandoned (its process died mid-check) and no longer holds a turn.
 */
export async function countLoginFailures(
  db: Db,
  email: string,
  ip: string,
  since: Date,
  pendingSince: Date,
): Promise<{ byEmail: number; byIp: number; pendingByEmail: number; pendingByIp: number }> {
  const row = await db('login_failures')
    .where('created_at', '>', since)
    .andWhere((q) => q.where('email', email.toLowerCase()).orWhere('ip', ip))
    .select(
      db.raw('count(*) filter (where email = ? and not pending)::int as by_email', [email.toLowerCase()]),
      db.raw('count(*) filter (where ip = ? and not pending)::int as by_ip', [ip]),
      db.raw('count(*) filter (where email = ? and pending and created_at > ?)::int as pending_by_email', [
        email.toLowerCase(),
        pendingSince,
      ]),
      db.raw('count(*) filter (where ip = ? and pending and created_at > ?)::int as pending_by_ip', [ip, pendingSince]),
    )
    .first();
  return {
    byEmail: row?.by_email ?? 0,
    byIp: row?.by_ip ?? 0,
    pendingByEmail: row?.pending_by_email ?? 0,
    pendingByIp: row?.pending_by_ip ?? 0,
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

export async function clearLoginFailures(db: Db, email: string): Promise<void> {
  // Other attempts still being checked stay: each ends as a failure or is removed by its own request.
  await db('login_failures').where('email', email.toLowerCase()).where('pending', false).delete();
}
