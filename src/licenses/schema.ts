import { z } from 'zod';
import { iso, lookupText, pageQuery, timestampInput, uuid, withoutControls } from '../http/schemas.ts';
import type { ActivationRow, LicenseRow } from './repo.ts';
import { effectiveStatus } from './status.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

export const LICENSE_STATUSES = ['active', 'expired', 'suspended', 'revoked'] as const;
/** Statuses an admin may set (expired comes from the date, D-32). */
export const SETTABLE_STATUSES = ['active', 'suspended', 'revoked'] as const;
export type SettableStatus = (typeof SETTABLE_STATUSES)[number];

const featureValue = z.union(
  [
    z.boolean(),
    z.number().refine(Number.isFinite, 'must be a finite number'),
    z
      .array(withoutControls(z.string().max(200, 'must be at most 200 characters')))
      .max(100, 'must hold at most 100 strings'),
  ],
  { error: 'must be a boolean, a number or an array of strings' },
);

/** Feature flags and numeric limits (D-31): at most 100 keys. */
export const features = z
  .record(withoutControls(z.string().min(1).max(100)), featureValue)
  .refine((f) => Object.keys(f).length <= 100, 'must have at most 100 keys');

/** null is unlimited; otherwise an integer >= 1 (D-31). */
export const maxActivations = z
  .number({ error: 'must be an integer >= 1, or null for unlimited' })
  .int('must be an integer >= 1, or null for unlimited')
  .min(1, 'must be an integer >= 1, or null for unlimited')
  .max(1_000_000)
  .nullable();

const HEARTBEAT_BOUNDS = 'must be an integer number of seconds from 10 to 86400, or null for no heartbeats';
/** D-102: how often devices check in; null turns heartbeats (and dead devices) off. */
export const heartbeatIntervalSeconds = z
  .number({ error: HEARTBEAT_BOUNDS })
  .int(HEARTBEAT_BOUNDS)
  .min(10, HEARTBEAT_BOUNDS)
  .max(86_400, HEARTBEAT_BOUNDS)
  .nullable();

export const createLicenseBody = z
  .object({
    customerId: uuid,
    productId: uuid,
    maxActivations: maxActivations.optional(),
    features: features.optional(),
    expiresAt: timestampInput.nullable().optional(),
    heartbeatIntervalSeconds: heartbeatIntervalSeconds.optional(),
  })
  .meta({
    examples: [
      {
        customerId: EXAMPLE_ID.customer,
        productId: EXAMPLE_ID.product,
        maxActivations: 3,
        features: { seats: 10, sso: true, modules: ['reports', 'exports'] },
        expiresAt: '2030-12-31',
        heartbeatIntervalSeconds: 600,
      },
    ],
  });
export type CreateLicenseInput = z.infer<typeof createLicenseBody>;

export const updateLicenseBody = z
  .object({
    status: z.enum(SETTABLE_STATUSES, { error: `must be one of ${SETTABLE_STATUSES.join(', ')}` }).optional(),
    maxActivations: maxActivations.optional(),
    features: features.optional(),
    expiresAt: timestampInput.nullable().optional(),
    heartbeatIntervalSeconds: heartbeatIntervalSeconds.optional(),
  })
  .meta({
    examples: [
      {
        maxActivations: 5,
        features: { seats: 25, sso: true, modules: ['reports', 'exports'] },
        heartbeatIntervalSeconds: 600,
      },
    ],
  });
export type UpdateLicenseInput = z.infer<typeof updateLicenseBody>;

export const listLicensesQuery = pageQuery.extend({
  customerId: uuid.optional(),
  productId: uuid.optional(),
  status: z.enum(LICENSE_STATUSES).optional(),
});

/** A key in a path: any text; the lookup normalises it, and a key that names nothing is 404. */
export const keyParams = z.object({ key: z.string().min(1).max(100) });
export const activationParams = keyParams.extend({ deviceId: z.string().min(1).max(256) });

const deviceText = withoutControls(
  z
    .string({ error: 'must be a string of 1-256 characters' })
    .min(1, 'must not be empty')
    .max(256, 'must be at most 256 characters'),
);
/**
 * A blank key is a bad request; any other text (NUL included) is looked up, and one that names nothing is 404 (D-33).
 */
const licenseKey = lookupText(
  z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
);
export const verifyBody = z.object({ licenseKey }).meta({ examples: [{ licenseKey: EXAMPLE_ID.licenseKey }] });
export const heartbeatBody = verifyBody
  .extend({ deviceId: deviceText })
  .meta({ examples: [{ licenseKey: EXAMPLE_ID.licenseKey, deviceId: EXAMPLE_ID.deviceId }] });
export const validateBody = verifyBody.extend({ deviceId: deviceText, deviceName: deviceText }).meta({
  examples: [{ licenseKey: EXAMPLE_ID.licenseKey, deviceId: EXAMPLE_ID.deviceId, deviceName: "Jane's MacBook Pro" }],
});

export const licenseResponse = z
  .object({
    id: z.uuid(),
    licenseKey: z.string(),
    customerId: z.uuid(),
    productId: z.uuid(),
    status: z.enum(LICENSE_STATUSES),
    maxActivations: z.number().int().nullable(),
    currentActivations: z.number().int(),
    features: z.record(z.string(), z.unknown()),
    expiresAt: z.string().nullable(),
    heartbeatIntervalSeconds: z.number().int().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({
    examples: [
      {
        id: 'e2051627-8394-4a5b-826d-7e8f90011223',
        licenseKey: EXAMPLE_ID.licenseKey,
        customerId: EXAMPLE_ID.customer,
        productId: EXAMPLE_ID.product,
        status: 'active',
        maxActivations: 3,
        currentActivations: 1,
        features: { seats: 10, sso: true, modules: ['reports', 'exports'] },
        expiresAt: '2030-12-31T00:00:00.000Z',
        heartbeatIntervalSeconds: 600,
        createdAt: '2026-01-05T09:30:00.000Z',
        updatedAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

export const activationResponse = z
  .object({ deviceId: z.string(), deviceName: z.string(), activatedAt: z.string(), lastSeenAt: z.string() })
  .meta({
    examples: [
      {
        deviceId: EXAMPLE_ID.deviceId,
        deviceName: "Jane's MacBook Pro",
        activatedAt: '2026-01-05T09:30:00.000Z',
        lastSeenAt: '2026-02-05T09:30:00.000Z',
      },
    ],
  });

export const verifyResponse = z
  .object({
    valid: z.boolean(),
    status: z.enum(LICENSE_STATUSES),
    features: z.record(z.string(), z.unknown()),
    expiresAt: z.string().nullable(),
  })
  .meta({
    examples: [
      {
        valid: true,
        status: 'active',
        features: { seats: 10, sso: true, modules: ['reports', 'exports'] },
        expiresAt: '2030-12-31T00:00:00.000Z',
      },
    ],
  });

export const validateResponse = verifyResponse
  .extend({
    error: z.enum(['activation_limit_reached', 'license_suspended', 'license_expired', 'license_revoked']).optional(),
    maxActivations: z.number().int().nullable().optional(),
    currentActivations: z.number().int().optional(),
    activation: activationResponse.optional(),
  })
  .meta({
    examples: [
      {
        valid: true,
        status: 'active',
        features: { seats: 10, sso: true, modules: ['reports', 'exports'] },
        expiresAt: '2030-12-31T00:00:00.000Z',
        maxActivations: 3,
        currentActivations: 1,
        activation: {
          deviceId: EXAMPLE_ID.deviceId,
          deviceName: "Jane's MacBook Pro",
          activatedAt: '2026-01-05T09:30:00.000Z',
          lastSeenAt: '2026-02-05T09:30:00.000Z',
        },
      },
    ],
  });

export const heartbeatResponse = z
  .object({
    valid: z.boolean(),
    status: z.enum(LICENSE_STATUSES),
    nextHeartbeatBefore: z.string().nullable(),
  })
  .meta({ examples: [{ valid: true, status: 'active', nextHeartbeatBefore: '2026-02-05T09:40:00.000Z' }] });

export const deviceNotActivatedResponse = z
  .object({ valid: z.literal(false), error: z.literal('device_not_activated') })
  .meta({ examples: [{ valid: false, error: 'device_not_activated' }] });

export const notFoundResponse = z
  .object({ valid: z.literal(false), error: z.literal('license_not_found') })
  .meta({ examples: [{ valid: false, error: 'license_not_found' }] });

export function serialiseLicense(row: LicenseRow, now = new Date()) {
  return {
    id: row.id,
    licenseKey: row.license_key,
    customerId: row.customer_id,
    productId: row.product_id,
    status: effectiveStatus(row, now),
    maxActivations: row.max_activations,
    currentActivations: row.current_activations,
    features: row.features,
    expiresAt: iso(row.expires_at),
    heartbeatIntervalSeconds: row.heartbeat_interval_seconds,
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}

export function serialiseActivation(row: ActivationRow) {
  return {
    deviceId: row.device_id,
    deviceName: row.device_name,
    activatedAt: iso(row.activated_at)!,
    lastSeenAt: iso(row.last_seen_at)!,
  };
}
