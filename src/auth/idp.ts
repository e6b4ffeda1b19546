import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Db } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import { getSettings, type SettingOverrides } from '../settings/service.ts';

/** Who the provider says signed in: its issuer and `sub` are the key (issue 33); the email is only a claim. */
export interface IdpIdentity {
  issuer: string;
  subject: string;
  /** The `email` claim, if the token has one (never the name typed at sign-in). */
  email: string | undefined;
  /** `email_verified: true` in the token: the provider vouches that the user holds the address. */
  emailVerified: boolean;
  isAdmin: boolean;
}

const IDP_TIMEOUT_MS = 10_000;
const jwksByUrl = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function jwksFor(realmUrl: string) {
  const url = `${realmUrl}/protocol/openid-connect/certs`;
  let jwks = jwksByUrl.get(url);
  if (!jwks) {
    jwks = createRemoteJWKSet(new URL(url), { timeoutDuration: IDP_TIMEOUT_MS });
    jwksByUrl.set(url, jwks);
  }
  return jwks;
}

const idpFailure = (message: string) => new AppError('identity_provider_error', `Identity provider: ${message}`);

/**
 * OpenID Connect password grant at `{realm}/protocol/openid-connect/token` (D-13). Wrong credentials
 * give undefined; an unreachable, misconfigured or misbehaving provider is a 502. The access token's
 * signature is checked against the realm's JWKS before its roles are trusted.
 */
export async function authenticateWithIdp(
  db: Db,
  email: string,
  password: string,
  overrides: SettingOverrides,
): Promise<IdpIdentity | undefined> {
  const s = await getSettings(
    db,
    ['auth.idp.realm_url', 'auth.idp.client_id', 'auth.idp.client_secret', 'auth.idp.admin_role'],
    overrides,
  );
  const realmUrl = s['auth.idp.realm_url'].replace(/\/+$/, '');
  if (!realmUrl || !s['auth.idp.client_id']) throw idpFailure('auth.idp.realm_url and auth.idp.client_id must be set');

  const form = new URLSearchParams({
    grant_type: 'password',
    client_id: s['auth.idp.client_id'],
    username: email,
    password,
    scope: 'openid email',
  });
  if (s['auth.idp.client_secret']) form.set('client_secret', s['auth.idp.client_secret']);
  let response: Response;
  try {
    response = await fetch(`${realmUrl}/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form,
      signal: AbortSignal.timeout(IDP_TIMEOUT_MS),
      redirect: 'error',
    });
  } catch {
    throw idpFailure('token endpoint unreachable');
  }
  if (response.status === 401 || response.status === 400) {
    // Only invalid_grant is about the user (Keycloak: 401 for a wrong password, 400 for a disabled
    // account). invalid_client / unauthorized_client mean our client id or secret is wrong: calling
    // that "wrong password" would hide the misconfiguration and count failures against every user.
    const refusal = (await response.json().catch(() => ({}))) as { error?: unknown };
    if (refusal.error === 'invalid_grant') return undefined;
    throw idpFailure(
      `token endpoint refused the request ` +
        `(${typeof refusal.error === 'string' ? refusal.error.slice(0, 50) : response.status})`,
    );
  }
  if (!response.ok) throw idpFailure(`token endpoint answered ${response.status}`);
  const tokens = (await response.json().catch(() => ({}))) as { access_token?: unknown };
  if (typeof tokens.access_token !== 'string') throw idpFailure('no access_token in the token response');

  let claims: JWTPayload & { realm_access?: { roles?: unknown }; email?: unknown; email_verified?: unknown };
  try {
    ({ payload: claims } = await jwtVerify(tokens.access_token, jwksFor(realmUrl), {
      issuer: realmUrl,
      algorithms: ['RS256', 'RS384', 'RS512', 'ES256', 'PS256'],
    }));
  } catch {
    throw idpFailure('access token signature or claims are invalid');
  }
  if (typeof claims.sub !== 'string' || claims.sub === '') throw idpFailure('the access token has no sub claim');
  const roles = Array.isArray(claims.realm_access?.roles) ? claims.realm_access.roles : [];
  return {
    issuer: realmUrl,
    subject: claims.sub,
    email: typeof claims.email === 'string' && claims.email.trim() !== '' ? claims.email.trim() : undefined,
    emailVerified: claims.email_verified === true,
    isAdmin: roles.includes(s['auth.idp.admin_role']),
  };
}
