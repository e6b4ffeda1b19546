import type { Db } from '../db/knex.ts';
import { queryPrepared, type PreparedStatement } from '../db/prepared.ts';

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

// Prepared: every admin request reads it (figures in db/prepared.ts).
const LIVE_SESSION: PreparedStatement = {
  name: 'auth.live-session',
  text: `select s.id as session_id, u.id as user_id, u.email, u.role
           from sessions s join users u on u.id = s.user_id
          where s.token_hash = $1 and s.expires_at > now()`,
};

/** The session behind a token hash, with its user, unless it has expired. Runs before every admin request. */
export async function findLiveSession(db: Db, tokenHash: string): Promise<SessionUserRow | undefined> {
  const [row] = await queryPrepared<SessionUserRow>(db, LIVE_SESSION, [tokenHash]);
  return row;
}

export async function deleteSession(db: Db, id: string): Promise<void> {
  await db('sessions').where({ id }).delete();
}
