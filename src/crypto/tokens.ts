import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** `bytes` random bytes from the CSPRNG as base64url. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Tokens and keys are stored only as their SHA-256 (hex). */
export function sha256Hex(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time equality of two secrets of any length (hashing first hides the length). */
export function secretsEqual(a: string | Buffer, b: string | Buffer): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db) && Buffer.byteLength(a) === Buffer.byteLength(b);
}
