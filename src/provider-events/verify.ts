/**
 * Signatures of inbound provider webhooks (D-62, interface.md Authentication 5), checked on the exact
 * request bytes. Each provider may have several secrets configured at once (rotation): any one verifies.
 */
import { createHmac } from 'node:crypto';
import { secretsEqual } from '../crypto/tokens.ts';
import { AppError } from '../errors.ts';

export const SIGNATURE_TOLERANCE_SECONDS = 300;

export const PROVIDERS = ['provider_a', 'provider_b', 'provider_c'] as const;
export type Provider = (typeof PROVIDERS)[number];

const invalid = (message: string) => new AppError('invalid_signature', message);

const hmacHex = (secret: string, data: Buffer | string) => createHmac('sha256', secret).update(data).digest('hex');

/** provider_a: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">` (several v1 allowed), within 300 s of now. */
export function verifyProviderA(raw: Buffer, header: string, secrets: string[], now: Date): void {
  if (!header) throw invalid('Missing provider_a-Signature header');
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') timestamp = value;
    else if (key === 'v1') signatures.push(value);
  }
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || signatures.length === 0)
    throw invalid('Malformed provider_a-Signature header: expected t=<timestamp>,v1=<signature>');
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) {
    throw invalid(`provider_a-Signature timestamp is more than ${SIGNATURE_TOLERANCE_SECONDS} s from now`);
  }
  const signed = Buffer.concat([Buffer.from(`${timestamp}.`), raw]);
  const ok = secrets.some((secret) => {
    const expected = hmacHex(secret, signed);
    return signatures.some((given) => secretsEqual(given, expected));
  });
  if (!ok) throw invalid('provider_a-Signature does not match the body');
}

/** provider_b: the configured callback token in `x-callback-token`. */
export function verifyProviderB(header: string, tokens: string[]): void {
  if (!header) throw invalid('Missing x-callback-token header');
  if (!tokens.some((token) => secretsEqual(header, token))) throw invalid('x-callback-token does not match');
}

/** provider_c: `X-Signature`, hex HMAC-SHA256 of the body. */
export function verifyProviderC(raw: Buffer, header: string, secrets: string[]): void {
  if (!header) throw invalid('Missing X-Signature header');
  if (!secrets.some((secret) => secretsEqual(header.trim().toLowerCase(), hmacHex(secret, raw))))
    throw invalid('X-Signature does not match the body');
}
