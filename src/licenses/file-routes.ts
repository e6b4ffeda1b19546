import type { Config } from '../config.ts';
import { keyringOf } from '../crypto/envelope.ts';
import { defineRoute } from '../http/route.ts';
import { iso } from '../http/schemas.ts';
import { checkOutAsAdmin, checkOutForDevice, type CheckedOutFile, type CheckoutContext } from './file-checkout.ts';
import {
  adminCheckoutBody,
  deviceCheckoutBody,
  jwksResponse,
  licenseFileResponse,
  signingJwkResponse,
} from './license-file-schema.ts';
import { limitPublic } from './routes.ts';
import { keyParams } from './schema.ts';
import { publishedSigningKeys, rotateSigningKey } from './signing-keys.ts';

// Parsed once per configuration, not per request.
const contexts = new WeakMap<Config, CheckoutContext>();
function checkoutContext(config: Config): CheckoutContext {
  let context = contexts.get(config);
  if (!context) {
    context = { keyring: keyringOf(config), settings: config };
    contexts.set(config, context);
  }
  return context;
}

const fileReply = (file: CheckedOutFile) => ({
  body: { licenseFile: file.licenseFile, issuedAt: iso(file.issuedAt)!, expiresAt: iso(file.expiresAt)! },
});

const REFUSED = 'license_suspended, license_expired, license_revoked';

/**
 * D-100 signing keys and D-101 license files. Listed before licenseRoutes: `/api/licenses/:key` would take
 * `signing-keys`.
 */
export const licenseFileRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/licenses/signing-keys',
    auth: 'public',
    tag: 'Licenses',
    summary: 'The public keys that verify license files, as a JWKS (rotated keys included)',
    responses: { 200: { description: 'JWKS (RFC 7517) of Ed25519 keys, oldest first', schema: jwksResponse } },
    errors: [],
    handler: async ({ deps }) => ({
      body: await publishedSigningKeys(deps.db),
      headers: { 'Cache-Control': 'public, max-age=300' },
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/licenses/signing-keys/rotate',
    auth: 'admin',
    tag: 'Licenses',
    summary: 'Make a new signing key current; the old ones stay published, so files they signed still verify',
    responses: { 201: { description: 'The new current key', schema: signingJwkResponse } },
    errors: [],
    handler: async ({ deps, actor }) => ({
      status: 201,
      body: await rotateSigningKey(deps.db, checkoutContext(deps.config).keyring, actor),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/licenses/checkout',
    auth: 'public',
    tag: 'Licenses',
    summary: 'A signed license file for a device activated on the license, to verify offline (no credentials)',
    body: deviceCheckoutBody,
    responses: {
      200: { description: 'The license file and its validity', schema: licenseFileResponse },
      404: { description: 'license_not_found: no license has this key' },
      409: { description: `${REFUSED}, or device_not_activated (validate the device first)` },
      429: { description: 'rate_limited' },
    },
    errors: [
      'license_not_found',
      'rate_limited',
      'license_suspended',
      'license_expired',
      'license_revoked',
      'device_not_activated',
    ],
    handler: async (input) => {
      await limitPublic(input);
      return fileReply(await checkOutForDevice(input.deps.db, input.body, checkoutContext(input.deps.config)));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/licenses/:key/checkout',
    auth: 'admin',
    tag: 'Licenses',
    summary: 'A signed license file issued by an admin, for a named device or none (air-gapped machines)',
    params: keyParams,
    body: adminCheckoutBody,
    responses: {
      200: { description: 'The license file and its validity', schema: licenseFileResponse },
      404: { description: 'not_found' },
      409: { description: REFUSED },
    },
    errors: ['license_suspended', 'license_expired', 'license_revoked'],
    handler: async ({ deps, params, body, actor }) =>
      fileReply(await checkOutAsAdmin(deps.db, params.key, body, checkoutContext(deps.config), actor)),
  }),
];
