/**
 * A fake OpenID Connect identity provider (Keycloak's wire format) on loopback: the password grant
 * at `{realm}/protocol/openid-connect/token` answering RS256 access tokens, and the realm's JWKS at
 * `{realm}/protocol/openid-connect/certs`. Only the outside world is faked; the service's real
 * client code talks to it over HTTP.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export interface FakeIdpUser {
  password: string;
  /** The `email` claim; absent: the token carries none. */
  email?: string;
  /** The `email_verified` claim; absent: the token carries none. */
  emailVerified?: boolean;
  /** The `sub` claim; `sub-<username>` unless given. */
  sub?: string;
  roles: string[];
}

/** `realm`: the published key; `rogue`: a key the realm never published, under its own kid or the realm's. */
export type SigningMode = 'realm' | 'rogue-own-kid' | 'rogue-realm-kid';

export interface FakeOidc {
  realmUrl: string;
  clientId: string;
  clientSecret: string;
  users: Map<string, FakeIdpUser>;
  signingMode: SigningMode;
  /** Every token request's form fields, to check what the service sent. */
  tokenRequests: URLSearchParams[];
  close(): Promise<void>;
}

interface Key {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function newKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeOidc(options: { clientId?: string; clientSecret?: string } = {}): Promise<FakeOidc> {
  const realmKey = await newKey('realm-key-1');
  const rogueKey = await newKey('rogue-key-1');
  const realmPath = '/realms/billing';
  const server = http.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const realmUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${realmPath}`;

  const fake: FakeOidc = {
    realmUrl,
    clientId: options.clientId ?? 'billing-admin',
    clientSecret: options.clientSecret ?? 'client-secret-value',
    users: new Map(),
    signingMode: 'realm',
    tokenRequests: [],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  async function accessToken(username: string, user: FakeIdpUser): Promise<string> {
    const key = fake.signingMode === 'realm' ? realmKey : rogueKey;
    const kid = fake.signingMode === 'rogue-realm-kid' ? realmKey.kid : key.kid;
    return new SignJWT({
      ...(user.email === undefined ? {} : { email: user.email }),
      ...(user.emailVerified === undefined ? {} : { email_verified: user.emailVerified }),
      preferred_username: username,
      azp: fake.clientId,
      typ: 'Bearer',
      realm_access: { roles: user.roles },
    })
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .setIssuer(realmUrl)
      .setSubject(user.sub ?? `sub-${username.toLowerCase()}`)
      .setAudience('account')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key.privateKey);
  }

  async function token(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return sendJson(res, 400, { error: 'invalid_request', error_description: 'form body expected' });
    }
    const form = new URLSearchParams(await readBody(req));
    fake.tokenRequests.push(form);
    if (form.get('client_id') !== fake.clientId || form.get('client_secret') !== fake.clientSecret) {
      return sendJson(res, 401, {
        error: 'invalid_client',
        error_description: 'Invalid client or Invalid client credentials',
      });
    }
    if (form.get('grant_type') !== 'password') return sendJson(res, 400, { error: 'unsupported_grant_type' });
    const username = form.get('username') ?? '';
    const user = fake.users.get(username.toLowerCase());
    if (!user || user.password !== form.get('password')) {
      return sendJson(res, 401, { error: 'invalid_grant', error_description: 'Invalid user credentials' });
    }
    sendJson(res, 200, {
      access_token: await accessToken(username, user),
      token_type: 'Bearer',
      expires_in: 300,
      scope: 'openid email profile',
    });
  }

  server.on('request', (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'POST' && path === `${realmPath}/protocol/openid-connect/token`) {
      token(req, res).catch((error: unknown) => sendJson(res, 500, { error: String(error) }));
    } else if (req.method === 'GET' && path === `${realmPath}/protocol/openid-connect/certs`) {
      sendJson(res, 200, { keys: [realmKey.publicJwk] });
    } else {
      sendJson(res, 404, { error: 'not_found' });
    }
  });
  return fake;
}
