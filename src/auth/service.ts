import { z } from 'zod';
import type { Db } from '../db/knex.ts';
import { randomToken, sha256Hex } from '../crypto/tokens.ts';
import { AppError } from '../errors.ts';
import { issuesToDetails } from '../http/validate.ts';
import { getSettings, type SettingOverrides } from '../settings/service.ts';
import { authenticateWithIdp } from './idp.ts';
import { userForIdpIdentity } from './idp-users.ts';
import { beginLoginAttempt, forgetLoginAttempt, recordLoginFailed } from './login-throttle.ts';
import { burnPasswordCheck, hashPassword, isLegacyHash, verifyPassword } from './passwords.ts';
import { clearLoginFailures } from './login-failures-repo.ts';
import {
  deleteSession,
  findLiveSession,
  findUserByEmail,
  insertSession,
  insertUser,
  updateUser,
  type SessionUserRow,
  type UserRow,
} from './repo.ts';
import { loginBody } from './schema.ts';
import { isUniqueViolation } from '../db/errors.ts';

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
/** The role an identity-provider user without `auth.idp.admin_role` gets: logged in, but 403 on the admin API. */
export const NON_ADMIN_IDP_ROLE = 'user';

const invalidCredentials = () => new AppError('invalid_credentials', 'Invalid email or password');

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

async function verifyWithIdp(
  db: Db,
  email: string,
  password: string,
  overrides: SettingOverrides,
): Promise<UserRow | undefined> {
  const identity = await authenticateWithIdp(db, email, password, overrides);
  if (!identity) return undefined;
  return userForIdpIdentity(db, identity, identity.isAdmin ? ADMIN_ROLE : NON_ADMIN_IDP_ROLE);
}

/**
 * Checks credentials (locally or at the identity provider) and opens a new session (D-11, D-13, D-16).
 * `overrides` carries the environment that overrides settings (the app passes its config).
 */
export async function login(
  db: Db,
  input: { email: string; password: string; ip: string; userAgent: string | null },
  overrides: SettingOverrides,
): Promise<LoginResult> {
  const settings = await getSettings(
    db,
    ['auth.provider', 'auth.session_expiry_days', 'auth.login_max_failures', 'auth.login_window_minutes'],
    overrides,
  );
  // Pending from here on (throttling, D-16): a failure if the credentials are wrong, else removed.
  const attemptId = await beginLoginAttempt(
    db,
    input.email,
    input.ip,
    settings['auth.login_max_failures'],
    settings['auth.login_window_minutes'],
  );

  let user: UserRow | undefined;
  try {
    user =
      settings['auth.provider'] === 'idp'
        ? await verifyWithIdp(db, input.email, input.password, overrides)
        : await verifyLocal(db, input.email, input.password);
  } catch (error) {
    await forgetLoginAttempt(db, attemptId);
    throw error;
  }
  if (!user) {
    await recordLoginFailed(db, attemptId);
    throw invalidCredentials();
  }
  await forgetLoginAttempt(db, attemptId);
  await clearLoginFailures(db, input.email, input.ip);

  // A fresh token every login: a cookie planted before login never becomes a session (no fixation).
  const token = randomToken(32);
  const expiresAt = new Date(Date.now() + settings['auth.session_expiry_days'] * 86_400_000);
  await insertSession(db, {
    token_hash: sha256Hex(token),
    user_id: user.id,
    expires_at: expiresAt,
    ip: input.ip,
    user_agent: input.userAgent?.slice(0, 500) ?? null,
  });
  return { user: { id: user.id, email: user.email, role: user.role }, token, expiresAt };
}

/** Deletes the live session behind a cookie token; false when there is none (already gone or expired). */
export async function logoutByToken(db: Db, token: string): Promise<boolean> {
  const session = await findSessionByToken(db, token);
  if (!session) return false;
  await deleteSession(db, session.session_id);
  return true;
}

/** The live session behind a cookie token, or undefined. */
export async function findSessionByToken(db: Db, token: string): Promise<SessionUserRow | undefined> {
  if (!token || token.length > 200) return undefined;
  return findLiveSession(db, sha256Hex(token));
}

/** What an admin is: a user with the admin role (the console's sign-in refuses the others with it too). */
export function isAdmin(user: { role: string }): boolean {
  return user.role === ADMIN_ROLE;
}

/**
 * The one admin check of a request (the API's auth middleware and the console's router both call it): the live
 * session behind the cookie's token whose user has the admin role. No token, an unknown or expired session is
 * `unauthenticated`; another role is `forbidden`. The session row is read every time, so a logout or an expiry
 * is honoured at once by every process.
 */
export async function authenticateAdminSession(db: Db, token: string | undefined): Promise<SessionUserRow> {
  if (!token) throw new AppError('unauthenticated', 'Log in first: no session cookie');
  const session = await findSessionByToken(db, token);
  if (!session) throw new AppError('unauthenticated', 'Session expired or logged out');
  if (!isAdmin(session)) throw new AppError('forbidden', 'This account is not an admin');
  return session;
}

// The same limits as the login body, so a user created here can always log in.
const newLocalUser = z.object({
  email: z.email('must be an email address').max(320),
  password: loginBody.shape.password,
  role: z.string().regex(/^[a-z][a-z0-9_-]{0,49}$/, 'must be lower-case letters, digits, _ or - (at most 50)'),
});

/** Creates a local user (CLI, first admin); an invalid input is a 400, an existing email a 409. */
export async function createLocalUser(
  db: Db,
  input: { email: string; password: string; role: string },
): Promise<PublicUser> {
  const parsed = newLocalUser.safeParse({ ...input, email: input.email.trim() });
  if (!parsed.success) {
    const details = issuesToDetails(parsed.error, '');
    throw new AppError('invalid_request', `Invalid user: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`, {
      details,
    });
  }
  const { email, password, role } = parsed.data;
  const conflict = () => new AppError('conflict', `A user with email ${email} already exists`);
  if (await findUserByEmail(db, email)) throw conflict();
  const passwordHash = await hashPassword(password);
  try {
    const row = await insertUser(db, { email, password_hash: passwordHash, role, auth_source: 'local' });
    return { id: row.id, email: row.email, role: row.role };
  } catch (error) {
    // Two creators racing past the check above: the unique index on lower(email) decides.
    if (isUniqueViolation(error)) throw conflict();
    throw error;
  }
}
