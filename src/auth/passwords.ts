import argon2 from 'argon2';
import bcrypt from 'bcryptjs';

/**
 * Argon2id parameters, written out rather than left to the library's defaults so that an upgrade cannot
 * change them silently (README, Security). Hashes carry their parameters, so old ones keep verifying.
 */
export const ARGON2_OPTIONS = {
  type: argon2.argon2id,
  memoryCost: 65_536,
  timeCost: 3,
  parallelism: 4,
  hashLength: 32,
} as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2_OPTIONS);
}

const BCRYPT_PREFIX = /^\$2[aby]\$/;

export function isLegacyHash(hash: string): boolean {
  return BCRYPT_PREFIX.test(hash);
}

/** Verifies Argon2id hashes and legacy bcrypt hashes ($2a$, $2b$, $2y$). */
export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  if (isLegacyHash(hash)) return bcrypt.compare(password, hash);
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

// Verified against when the email is unknown, so both failures take the same time (D-11).
let dummyHash: Promise<string> | undefined;
export async function burnPasswordCheck(password: string): Promise<void> {
  dummyHash ??= hashPassword('timing-equaliser-not-a-real-password');
  await verifyPassword(await dummyHash, password);
}
