import { randomInt } from 'node:crypto';

/** Crockford base32: no I, L, O, U, so keys read back unambiguously (D-30). */
export const KEY_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function group(): string {
  let out = '';
  for (let i = 0; i < 4; i++) out += KEY_ALPHABET[randomInt(KEY_ALPHABET.length)];
  return out;
}

/** `<PREFIX>-XXXX-XXXX-XXXX` from the CSPRNG: 60 random bits. */
export function generateLicenseKey(prefix: string): string {
  return `${prefix}-${group()}-${group()}-${group()}`;
}

/** Keys typed by people are trimmed and upper-cased before lookup (D-30). */
export function normaliseLicenseKey(key: string): string {
  return key.trim().toUpperCase();
}

/**
 * A key this service could have issued: a prefix as the setting `licenses.key_prefix` allows
 * (settings/definitions.ts), then three groups of four alphabet characters.
 */
export const LICENSE_KEY_PATTERN = /^[A-Z0-9]{1,10}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/;
