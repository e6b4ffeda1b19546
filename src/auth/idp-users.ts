import type { Db } from '../db/knex.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { AppError } from '../errors.ts';
import type { IdpIdentity } from './idp.ts';
import { findUserByEmail, findUserByIdpSubject, insertUser, updateUser, type UserRow } from './repo.ts';

/**
 * Which of our users an identity-provider login is (D-13, issue 33). The key is the provider's issuer and `sub`,
 * stored on the user at its first login; the email claim only matters that first time:
 * - a known `sub` is its user, whatever email the token now claims;
 * - an email no user has makes a new IdP user (its role from the token, `claimedRole`);
 * - an email of an existing user links that user only when the token says `email_verified: true` (else anyone
 *   who can set an unverified email at the provider would become that user), and only if the user is not linked
 *   to another `sub` already.
 * The typed sign-in name is never used: a token without an email claim cannot make or link a user.
 */
export async function userForIdpIdentity(db: Db, identity: IdpIdentity, claimedRole: string): Promise<UserRow> {
  const known = await findUserByIdpSubject(db, identity.issuer, identity.subject);
  if (known) return withClaimedRole(db, known, claimedRole);
  if (!identity.email)
    throw new AppError(
      'identity_provider_error',
      'Identity provider: the access token has no email claim (add the email scope to the client)',
    );
  const existing = await findUserByEmail(db, identity.email);
  if (!existing) return newIdpUser(db, identity, identity.email, claimedRole);
  if (existing.idp_subject)
    throw new AppError('forbidden', `The account ${existing.email} belongs to another identity at the provider`);
  if (!identity.emailVerified)
    throw new AppError(
      'forbidden',
      `The identity provider has not verified the email ${existing.email}, which an account here already has: ` +
        'verify it at the provider, then sign in again',
    );
  const link = { idp_issuer: identity.issuer, idp_subject: identity.subject };
  await updateUser(db, existing.id, link);
  return withClaimedRole(db, { ...existing, ...link }, claimedRole);
}

/**
 * The provider decides the role of the users it made (a removed realm role demotes at the next login); a local
 * user it was linked to (an admin made by the CLI or the first-admin step) keeps its own role: a claim never
 * changes it.
 */
async function withClaimedRole(db: Db, user: UserRow, claimedRole: string): Promise<UserRow> {
  if (user.auth_source !== 'idp' || user.role === claimedRole) return user;
  await updateUser(db, user.id, { role: claimedRole });
  return { ...user, role: claimedRole };
}

async function newIdpUser(db: Db, identity: IdpIdentity, email: string, role: string): Promise<UserRow> {
  try {
    return await insertUser(db, {
      email,
      password_hash: null,
      role,
      auth_source: 'idp',
      idp_issuer: identity.issuer,
      idp_subject: identity.subject,
    });
  } catch (error) {
    // The same person's first login twice at once: the other request made the row.
    const made = isUniqueViolation(error) && (await findUserByIdpSubject(db, identity.issuer, identity.subject));
    if (made) return withClaimedRole(db, made, role);
    throw error;
  }
}
