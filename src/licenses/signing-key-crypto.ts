/**
 * The cryptography of license signing keys (D-100), all of it node:crypto's: Ed25519 key pairs, their
 * JWK and RFC 7638 thumbprint (the `kid`), and the private key's envelope at rest: AES-256-GCM under a
 * key scrypt derives from LICENSE_SIGNING_SECRET with a salt of its own, the kid bound in as associated
 * data so an envelope copied onto another key's row does not open.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  generateKeyPairSync,
  randomBytes,
  scrypt,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (secret: string, salt: Buffer, length: number) => Promise<Buffer>;

export type KeyEncryption = 'none' | 'scrypt-aes-256-gcm';

/** A JWKS entry (D-100). */
export interface SigningJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
}

export interface NewKeyPair {
  kid: string;
  /** base64url of the raw public key: the JWK's `x`. */
  publicKey: string;
  privateKey: KeyObject;
}

/** RFC 7638: SHA-256 of the JWK's required members in lexical order, base64url. */
function thumbprint(x: string): string {
  return createHash('sha256')
    .update(JSON.stringify({ crv: 'Ed25519', kty: 'OKP', x }))
    .digest('base64url');
}

export function generateSigningKeyPair(): NewKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x!;
  return { kid: thumbprint(x), publicKey: x, privateKey };
}

export function signingJwk(kid: string, publicKey: string): SigningJwk {
  return { kty: 'OKP', crv: 'Ed25519', x: publicKey, kid, use: 'sig', alg: 'EdDSA' };
}

const ENVELOPE = 'v1';

/** The private key as stored: PKCS8 PEM, or its envelope under `secret` when one is set. */
export async function sealPrivateKey(
  kid: string,
  privateKey: KeyObject,
  secret: string | undefined,
): Promise<{ privateKey: string; encryption: KeyEncryption }> {
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  if (secret === undefined) return { privateKey: pem, encryption: 'none' };
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await scryptAsync(secret, salt, 32), iv);
  cipher.setAAD(Buffer.from(kid));
  const sealed = Buffer.concat([cipher.update(pem, 'utf8'), cipher.final()]);
  const parts = [salt, iv, cipher.getAuthTag(), sealed].map((b) => b.toString('base64url'));
  return { privateKey: [ENVELOPE, ...parts].join('.'), encryption: 'scrypt-aes-256-gcm' };
}

/** The private key of an envelope, or undefined when `secret` is not the one it was sealed with. */
export async function openPrivateKey(kid: string, stored: string, secret: string): Promise<KeyObject | undefined> {
  const [version, salt, iv, tag, sealed] = stored
    .split('.')
    .map((p, i) => (i === 0 ? p : Buffer.from(p, 'base64url'))) as [string, Buffer, Buffer, Buffer, Buffer];
  if (version !== ENVELOPE || !sealed) return undefined;
  const decipher = createDecipheriv('aes-256-gcm', await scryptAsync(secret, salt, 32), iv);
  decipher.setAAD(Buffer.from(kid));
  decipher.setAuthTag(tag);
  try {
    return createPrivateKey(Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8'));
  } catch {
    // GCM's tag check failed: another secret sealed it.
    return undefined;
  }
}

export function privateKeyFromPem(pem: string): KeyObject {
  return createPrivateKey(pem);
}
