import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { RateLimiter } from '../http/rate-limit.ts';
import { defineRoute, type HandlerInput, type Reply } from '../http/route.ts';
import { freshCachedSetting, getSettingCached } from '../settings/cache.ts';
import { heartbeatDevice, validateLicense, verifyLicense, type CheckOutcome } from './check.ts';
import {
  activationParams,
  activationResponse,
  createLicenseBody,
  deviceNotActivatedResponse,
  heartbeatBody,
  heartbeatResponse,
  keyParams,
  licenseResponse,
  listLicensesQuery,
  notFoundResponse,
  serialiseActivation,
  serialiseLicense,
  updateLicenseBody,
  validateBody,
  validateResponse,
  verifyBody,
  verifyResponse,
} from './schema.ts';
import {
  createLicense,
  deleteLicense,
  getLicense,
  listActivations,
  listLicenses,
  removeActivation,
  updateLicense,
} from './service.ts';

// One limiter per app (keyed by its config object): a process that runs several apps, as the tests do, keeps
// their leases apart (each app has its own database there).
const publicLimiters = new WeakMap<object, RateLimiter>();

/**
 * D-16: public license endpoints, per client IP, `licenses.rate_limit_per_minute` (600), shared by every web process.
 * Not async itself: with the setting cached and a token held, a request is counted without a promise (issue 20).
 */
export function limitPublic({ deps, ctx }: HandlerInput<unknown, unknown, unknown>): Promise<void> | undefined {
  let limiter = publicLimiters.get(deps.config);
  if (!limiter) {
    limiter = new RateLimiter(deps.db, 'licenses.public', 60_000);
    publicLimiters.set(deps.config, limiter);
  }
  const limit = freshCachedSetting(deps.db, 'licenses.rate_limit_per_minute');
  if (limit !== undefined && limiter.take(ctx.ip, limit)) return undefined;
  return limitSlowly(limiter, deps, ctx.ip);
}

async function limitSlowly(
  limiter: RateLimiter,
  deps: HandlerInput<unknown, unknown, unknown>['deps'],
  ip: string,
): Promise<void> {
  await limiter.hit(ip, await getSettingCached(deps.db, 'licenses.rate_limit_per_minute', deps.config));
}

/** D-33: an unknown key is a 404 with the validation body, not the general error shape. */
function checkReply(outcome: CheckOutcome): Reply {
  return outcome.found
    ? { status: 200, body: outcome.body }
    : { status: 404, body: { valid: false, error: 'license_not_found' } };
}

export const licenseRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/licenses/verify',
    auth: 'public',
    tag: 'Licenses',
    summary: 'Whether a license key is valid now (no credentials)',
    body: verifyBody,
    responses: {
      200: { description: 'Found; valid says whether it may be used', schema: verifyResponse },
      404: { description: 'Unknown key', schema: notFoundResponse },
      429: { description: 'rate_limited' },
    },
    errors: ['rate_limited'],
    handler: async (input) => {
      await limitPublic(input);
      return checkReply(await verifyLicense(input.deps.db, input.body.licenseKey));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/licenses/validate',
    auth: 'public',
    tag: 'Licenses',
    summary: 'Validate a license and register the device, within maxActivations (no credentials)',
    body: validateBody,
    responses: {
      200: { description: 'valid true with the activation, or valid false with the refusal', schema: validateResponse },
      404: { description: 'Unknown key', schema: notFoundResponse },
      429: { description: 'rate_limited' },
    },
    errors: ['rate_limited'],
    handler: async (input) => {
      await limitPublic(input);
      return checkReply(await validateLicense(input.deps.db, input.body));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/licenses/heartbeat',
    auth: 'public',
    tag: 'Licenses',
    summary:
      'An activated device checks in, keeping its seat on a license with heartbeatIntervalSeconds (no credentials)',
    body: heartbeatBody,
    responses: {
      200: {
        description: 'The device is live; valid says whether the license may be used now',
        schema: heartbeatResponse,
      },
      404: {
        description: 'device_not_activated: unknown key or device, or a dead device (it must validate again)',
        schema: deviceNotActivatedResponse,
      },
      429: { description: 'rate_limited' },
    },
    errors: ['rate_limited'],
    handler: async (input) => {
      await limitPublic(input);
      const outcome = await heartbeatDevice(input.deps.db, input.body);
      return outcome.found
        ? { status: 200, body: outcome.body }
        : { status: 404, body: { valid: false, error: 'device_not_activated' } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/licenses',
    auth: 'admin',
    tag: 'Licenses',
    summary: 'List licenses, optionally by customer, product or status',
    query: listLicensesQuery,
    responses: { 200: { description: 'Licenses', schema: z.array(licenseResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) => {
      const now = new Date();
      return listReply(ctx, await listLicenses(deps.db, query, query), (row) => serialiseLicense(row, now));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/licenses',
    auth: 'admin',
    tag: 'Licenses',
    summary: 'Issue a license with a generated key',
    body: createLicenseBody,
    responses: {
      201: { description: 'Created', schema: licenseResponse },
      400: { description: 'invalid_request, customer_not_found, product_not_found' },
    },
    errors: ['customer_not_found', 'product_not_found'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialiseLicense(await createLicense(deps.db, body, deps.config, actor)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/licenses/:key',
    auth: 'admin',
    tag: 'Licenses',
    summary: 'Read one license by its key',
    params: keyParams,
    responses: { 200: { description: 'License', schema: licenseResponse }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params }) => ({ body: serialiseLicense(await getLicense(deps.db, params.key)) }),
  }),
  defineRoute({
    method: 'put',
    path: '/api/licenses/:key',
    auth: 'admin',
    tag: 'Licenses',
    summary: 'Change status, maxActivations, features, expiresAt or heartbeatIntervalSeconds (addressed by key)',
    params: keyParams,
    body: updateLicenseBody,
    responses: {
      200: { description: 'License', schema: licenseResponse },
      404: { description: 'not_found' },
      409: { description: 'license_revoked' },
    },
    errors: ['license_revoked'],
    handler: async ({ deps, params, body, actor }) => ({
      body: serialiseLicense(await updateLicense(deps.db, params.key, body, actor)),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/licenses/:key',
    auth: 'admin',
    tag: 'Licenses',
    summary: 'Delete a license and its activations',
    params: keyParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params, actor }) => {
      await deleteLicense(deps.db, params.key, actor);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/licenses/:key/activations',
    auth: 'admin',
    tag: 'Licenses',
    summary: 'The devices activated on a license',
    params: keyParams,
    responses: {
      200: { description: 'Activations', schema: z.array(activationResponse) },
      404: { description: 'not_found' },
    },
    errors: [],
    handler: async ({ deps, params }) => ({
      body: (await listActivations(deps.db, params.key)).map(serialiseActivation),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/licenses/:key/activations/:deviceId',
    auth: 'admin',
    tag: 'Licenses',
    summary: 'Remove a device activation, freeing its slot',
    params: activationParams,
    responses: { 204: { description: 'Removed' }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params, actor }) => {
      await removeActivation(deps.db, params.key, params.deviceId, actor);
      return { status: 204 };
    },
  }),
];
