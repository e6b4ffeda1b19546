import argon2 from 'argon2';
import bcrypt from 'bcryptjs';

/** Argon2id with the library's defaults (m=64 MiB, t=3, p=4), documented in README's security section. */
export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, { type: argon2.argon2id });
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
