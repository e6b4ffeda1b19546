#!/usr/bin/env node
/**
 * Verifies a license file (docs/license-files.md) offline, with node:crypto and the service's JWKS
 * (GET /api/licenses/signing-keys) only. Copy it into a client as it is, or read it as the reference.
 *
 *   import { verifyLicenseFile } from './verify-license-file.mjs';
 *   const result = verifyLicenseFile(fileText, jwks);   // { valid: true, payload, kid } or { valid: false, reason }
 *
 *   node docs/verify-license-file.mjs license.lic jwks.json        (or the JWKS's https URL)
 *   exit status 0 when valid, 1 when not, 2 on a usage error; the result is printed as JSON.
 */
import { createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const BEGIN = '-----BEGIN LICENSE FILE-----';
const END = '-----END LICENSE FILE-----';
const ALG = 'base64+ed25519';
/** A file's issuedAt may be this far ahead of the local clock (clocks drift); further means the clock was set back. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

/** The armoured file's {enc, sig, alg, kid}, or undefined when the text is not a license file. */
export function parseLicenseFile(text) {
  const trimmed = String(text).trim();
  if (!trimmed.startsWith(BEGIN) || !trimmed.endsWith(END)) return undefined;
  const body = trimmed.slice(BEGIN.length, -END.length).replace(/\s+/g, '');
  try {
    const document = JSON.parse(Buffer.from(body, 'base64').toString('utf8'));
    const { enc, sig, alg, kid } = document ?? {};
    if ([enc, sig, alg, kid].some((v) => typeof v !== 'string')) return undefined;
    return { enc, sig, alg, kid };
  } catch {
    return undefined;
  }
}

/**
 * Whether `text` is a license file signed by a key of `jwks` and not expired at `now`. Checks the
 * signature before reading the payload: nothing of an unsigned payload is trusted.
 */
export function verifyLicenseFile(text, jwks, { now = new Date() } = {}) {
  const file = parseLicenseFile(text);
  if (!file) return { valid: false, reason: 'malformed' };
  if (file.alg !== ALG) return { valid: false, reason: 'unsupported_alg' };
  const jwk = (jwks?.keys ?? []).find((k) => k.kid === file.kid && k.kty === 'OKP' && k.crv === 'Ed25519');
  // A kid not in the JWKS: a newer key than the copy the client holds (fetch the JWKS again when online) or a forgery.
  if (!jwk) return { valid: false, reason: 'unknown_kid', kid: file.kid };
  const publicKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
  const signed = verify(null, Buffer.from(`license/${file.enc}`, 'ascii'), publicKey, Buffer.from(file.sig, 'base64'));
  if (!signed) return { valid: false, reason: 'bad_signature', kid: file.kid };
  let payload;
  try {
    payload = JSON.parse(Buffer.from(file.enc, 'base64').toString('utf8'));
  } catch {
    return { valid: false, reason: 'malformed' };
  }
  const issuedAt = Date.parse(payload.issuedAt);
  const expiresAt = Date.parse(payload.expiresAt);
  if (Number.isNaN(issuedAt) || Number.isNaN(expiresAt)) return { valid: false, reason: 'malformed' };
  const at = now.getTime();
  if (at >= expiresAt) return { valid: false, reason: 'expired', kid: file.kid, payload };
  if (at + CLOCK_SKEW_MS < issuedAt) return { valid: false, reason: 'clock_behind', kid: file.kid, payload };
  return { valid: true, kid: file.kid, payload };
}

async function readJwks(source) {
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(source);
    if (!response.ok) throw new Error(`${source} answered ${response.status}`);
    return response.json();
  }
  return JSON.parse(readFileSync(source, 'utf8'));
}

async function main(args) {
  if (args.length !== 2) {
    console.error('usage: node verify-license-file.mjs <license file> <jwks.json | JWKS URL>');
    return 2;
  }
  const result = verifyLicenseFile(readFileSync(args[0], 'utf8'), await readJwks(args[1]));
  console.log(JSON.stringify(result, null, 2));
  return result.valid ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(2);
    },
  );
}
