import { z } from 'zod';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import { validateBody, verifyBody } from './schema.ts';

/** D-101: 1 hour to 365 days; absent, the setting licenses.file_ttl_days. */
const ttlSeconds = z
  .number({ error: 'must be an integer number of seconds from 3600 to 31536000' })
  .int('must be an integer number of seconds from 3600 to 31536000')
  .min(3600, 'must be at least 3600 (one hour)')
  .max(31_536_000, 'must be at most 31536000 (365 days)');

export const deviceCheckoutBody = z
  .object({
    licenseKey: verifyBody.shape.licenseKey,
    deviceId: validateBody.shape.deviceId,
    ttlSeconds: ttlSeconds.optional(),
  })
  .meta({ examples: [{ licenseKey: EXAMPLE_ID.licenseKey, deviceId: EXAMPLE_ID.deviceId, ttlSeconds: 604_800 }] });

export const adminCheckoutBody = z
  .object({
    deviceId: validateBody.shape.deviceId.optional(),
    ttlSeconds: ttlSeconds.optional(),
  })
  .meta({ examples: [{ deviceId: EXAMPLE_ID.deviceId, ttlSeconds: 2_592_000 }] });

const EXAMPLE_FILE = [
  '-----BEGIN LICENSE FILE-----',
  'eyJlbmMiOiJleUpzYVdObGJuTmxJanA3SW1sa0lqb2laVEl3TlRFMk1qY3RPRE01',
  'NEMwMFlUVmlMVGd5Tm1VdE4yVTRaamt3TURFeE1qSXpJaXdpYkdsalpXNXpaVXRs',
  'eSI6IkxJQy03SzNNLVE5WFctMkI4UCJ9Iiwic2lnIjoiLi4uIiwiYWxnIjoiYmFz',
  'ZTY0K2VkMjU1MTkiLCJraWQiOiJOemJMc1hoOHVEQ0NkLTZNTnd4cHJzNkRPaWJ3',
  '-----END LICENSE FILE-----',
  '',
].join('\n');

export const licenseFileResponse = z
  .object({
    licenseFile: z.string(),
    issuedAt: z.string(),
    expiresAt: z.string(),
  })
  .meta({
    examples: [
      { licenseFile: EXAMPLE_FILE, issuedAt: '2026-02-05T09:30:00.000Z', expiresAt: '2026-03-07T09:30:00.000Z' },
    ],
  });

const EXAMPLE_JWK = {
  kty: 'OKP',
  crv: 'Ed25519',
  x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
  kid: 'NzbLsXh8uDCcd-6MNwxprs6DOibwMYhcY0c9d2GGgLk',
  use: 'sig',
  alg: 'EdDSA',
} as const;

export const signingJwkResponse = z
  .object({
    kty: z.literal('OKP'),
    crv: z.literal('Ed25519'),
    x: z.string(),
    kid: z.string(),
    use: z.literal('sig'),
    alg: z.literal('EdDSA'),
  })
  .meta({ examples: [EXAMPLE_JWK] });

export const jwksResponse = z
  .object({ keys: z.array(signingJwkResponse) })
  .meta({ examples: [{ keys: [EXAMPLE_JWK] }] });
