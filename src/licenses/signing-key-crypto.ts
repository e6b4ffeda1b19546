/**
 * The cryptography of license signing keys (D-100), all of it node:crypto's: Ed25519 key pairs, their
 * JWK and RFC 7638 thumbprint (the `kid`), and the private key at rest in the envelope of every secret
 * (`crypto/envelope.ts`), the kid bound in so an envelope copied onto another key's row does not open.
 */
import { createHash, createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { isSealed, openSecret, sealSecret, type Keyring, type SealContext } from '../crypto/envelope.ts';

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

/** How the envelope knows a license key's private half: its row, by kid. */
export const privateKeyContext = (kid: string): SealContext => ({ aad: kid, label: `license signing key ${kid}` });

/** How a stored private key is marked: sealed in the envelope, or PKCS8 PEM (no key set, development). */
export const encryptionOf = (stored: string): KeyEncryption => (isSealed(stored) ? 'scrypt-aes-256-gcm' : 'none');

/** The private key as stored: its envelope under the first key, or PKCS8 PEM when no key is set. */
export async function sealPrivateKey(
  kid: string,
  privateKey: KeyObject | string,
  keyring: Keyring,
): Promise<{ privateKey: string; encryption: KeyEncryption }> {
  const pem =
    typeof privateKey === 'string' ? privateKey : (privateKey.export({ format: 'pem', type: 'pkcs8' }) as string);
  const stored = await sealSecret(keyring, pem, privateKeyContext(kid));
  return { privateKey: stored, encryption: encryptionOf(stored) };
}

/** The private key of a stored value (PEM or envelope); throws SealedSecretError when the keyring cannot open it. */
export async function openPrivateKey(kid: string, stored: string, keyring: Keyring): Promise<KeyObject> {
  return createPrivateKey(await openSecret(keyring, stored, privateKeyContext(kid)));
}
