import * as crypto from 'node:crypto';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** `bytes` random bytes from the CSPRNG as base64url. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Node's one-shot digest (20.12 and later; `engines` allows 20.0): a third of a Hash object's cost, and every
 * admin request hashes its session token (issue 20, read paths).
 */
const oneShotHash = (crypto as { hash?: typeof crypto.hash }).hash;

/** Tokens and keys are stored only as their SHA-256 (hex). */
export function sha256Hex(value: string | Buffer): string {
  return oneShotHash ? oneShotHash('sha256', value, 'hex') : createHash('sha256').update(value).digest('hex');
}

/** Constant-time equality of two secrets of any length (hashing first hides the length). */
export function secretsEqual(a: string | Buffer, b: string | Buffer): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db) && Buffer.byteLength(a) === Buffer.byteLength(b);
}

/** HMAC-SHA256 of `message` under `key`, base64url (43 characters). */
export function hmacSha256(key: string | Buffer, message: string): string {
  return createHmac('sha256', key).update(message).digest('base64url');
}
