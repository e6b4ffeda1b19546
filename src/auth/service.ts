import type { Db } from '../db/knex.ts';
import { randomToken, sha256Hex } from '../crypto/tokens.ts';
import { AppError } from '../http/errors.ts';
import { getSettings } from '../settings/service.ts';
import { authenticateWithIdp } from './idp.ts';
import { burnPasswordCheck, hashPassword, isLegacyHash, verifyPassword } from './passwords.ts';
import {
  clearLoginFailures,
  countLoginFailures,
  deleteSession,
  findLiveSession,
  findUserByEmail,
  insertSession,
  insertUser,
  recordLoginFailure,
  updateUser,
  type SessionUserRow,
  type UserRow,
} from './repo.ts';

export interface PublicUser {
  id: string;
  email: string;
  role: string;
}

export interface LoginResult {
  user: PublicUser;
  token: string;
  expiresAt: Date;
}

export const ADMIN_ROLE = 'admin';

const invalidCredentials = () => new AppError('invalid_credentials', 'Invalid email or password');

async function assertNotThrottled(db: Db, email: string, ip: string, max: number, windowMinutes: number): Promise<void> {
  const since = new Date(Date.now() - windowMinutes * 60_000);
  const { byEmail, byIp, oldest } = await countLoginFailures(db, email, ip, since);
  if (byEmail < max && byIp < max) return;
  const retryAfter = oldest ? Math.max(1, Math.ceil((oldest.getTime() + windowMinutes * 60_000 - Date.now()) / 1000)) : windowMinutes * 60;
  throw new AppError('rate_limited', 'Too many failed logins; try again later', { headers: { 'Retry-After': String(retryAfter) } });
}

async function verifyLocal(db: Db, email: string, password: string): Promise<UserRow | undefined> {
  const user = await findUserByEmail(db, email);
  if (!user?.password_hash) {
    await burnPasswordCheck(password);
    return undefined;
  }
  if (!(await verifyPassword(user.password_hash, password))) return undefined;
  // Legacy bcrypt hashes are upgraded the moment we hold the plain password (D-10).
  if (isLegacyHash(user.password_hash)) await updateUser(db, user.id, { password_hash: await hashPassword(password) });
  return user;
}

async function verifyWithIdp(db: Db, email: string, password: string): Promise<UserRow | undefined> {
  const identity = await authenticateWithIdp(db, email, password);
  if (!identity) return undefined;
  const role = identity.isAdmin ? ADMIN_ROLE : 'user';
  const existing = await findUserByEmail(db, identity.email);
  if (!existing) return insertUser(db, { email: identity.email, password_hash: null, role, auth_source: 'idp' });
  await updateUser(db, existing.id, { role, auth_source: 'idp' });
  return { ...existing, role, auth_source: 'idp' };
}

/** Checks credentials (locally or at the identity provider) and opens a new session (D-11, D-13, D-16). */
export async function login(db: Db, input: { email: string; password: string; ip: string; userAgent: string | null }): Promise<LoginResult> {
  const settings = await getSettings(db, ['auth.provider', 'auth.session_expiry_days', 'auth.login_max_failures', 'auth.login_window_minutes']);
  await assertNotThrottled(db, input.email, input.ip, settings['auth.login_max_failures'], settings['auth.login_window_minutes']);

  const user = settings['auth.provider'] === 'idp' ? await verifyWithIdp(db, input.email, input.password) : await verifyLocal(db, input.email, input.password);
  if (!user) {
    await recordLoginFailure(db, input.email, input.ip);
    throw invalidCredentials();
  }
  await clearLoginFailures(db, input.email);

  // A fresh token every login: a cookie planted before login never becomes a session (no fixation).
  const token = randomToken(32);
  const expiresAt = new Date(Date.now() + settings['auth.session_expiry_days'] * 86_400_000);
  await insertSession(db, { token_hash: sha256Hex(token), user_id: user.id, expires_at: expiresAt, ip: input.ip, user_agent: input.userAgent?.slice(0, 500) ?? null });
  return { user: { id: user.id, email: user.email, role: user.role }, token, expiresAt };
}

export async function logout(db: Db, sessionId: string): Promise<void> {
  await deleteSession(db, sessionId);
}

/** The live session behind a cookie token, or undefined. */
export async function findSessionByToken(db: Db, token: string): Promise<SessionUserRow | undefined> {
  if (!token || token.length > 200) return undefined;
  return findLiveSession(db, sha256Hex(token));
}

/** Creates a local user (CLI, first admin); an existing email is refused. */
export async function createLocalUser(db: Db, input: { email: string; password: string; role: string }): Promise<PublicUser> {
  if (await findUserByEmail(db, input.email)) throw new AppError('conflict', `A user with email ${input.email} already exists`);
  const row = await insertUser(db, { email: input.email.trim(), password_hash: await hashPassword(input.password), role: input.role, auth_source: 'local' });
  return { id: row.id, email: row.email, role: row.role };
}
