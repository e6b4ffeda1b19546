import type { Db } from '../db/knex.ts';
import { iso } from '../http/schemas.ts';
import { LICENSE_KEY_PATTERN, normaliseLicenseKey } from './key.ts';
import { checkDevice } from './device-check-repo.ts';
import {
  findActivationRow,
  findLicenseByKey,
  insertActivationUnderLimit,
  lockLicenseByKey,
  refreshActivationRow,
  type ActivationRow,
  type LicenseRow,
} from './repo.ts';
import { heartbeatActivation, releaseSilentActivations } from './seats-repo.ts';
import { serialiseActivation } from './schema.ts';
import { effectiveStatus, nextHeartbeatBefore, refusalFor, type LicenseStatus } from './status.ts';

/** What the public endpoints answer: found (200, valid or not) or not found (404). */
export type CheckOutcome = { found: false } | { found: true; body: Record<string, unknown> };

function basics(license: LicenseRow, status: LicenseStatus) {
  return { status, features: license.features, expiresAt: iso(license.expires_at) };
}

/**
 * The normalised key, or undefined for text that cannot be a key: these endpoints are the most
 * attacked, and a guess of the wrong shape is answered not found without asking the database.
 */
function lookupKey(licenseKey: string): string | undefined {
  const key = normaliseLicenseKey(licenseKey);
  return LICENSE_KEY_PATTERN.test(key) ? key : undefined;
}

/** D-33: whether the key is usable now. */
export async function verifyLicense(db: Db, licenseKey: string): Promise<CheckOutcome> {
  const key = lookupKey(licenseKey);
  if (!key) return { found: false };
  const license = await findLicenseByKey(db, key);
  if (!license) return { found: false };
  const status = effectiveStatus(license, new Date());
  return { found: true, body: { valid: status === 'active', ...basics(license, status) } };
}

function validAnswer(license: LicenseRow, currentActivations: number, activation: ActivationRow) {
  return {
    valid: true,
    ...basics(license, 'active'),
    maxActivations: license.max_activations,
    currentActivations,
    activation: serialiseActivation(activation),
  };
}

/**
 * D-34: checks the license and registers the device. A known live device is refreshed without a lock; a
 * new one takes the license row lock, so activations of one license are decided one at a time and can
 * never pass maxActivations, whatever the concurrency. Both in one statement (checkDevice), which also
 * frees the seats of dead devices (D-102) before it decides. A dead device validating again is a new
 * activation: it gets a seat only if one is free.
 */
export async function validateLicense(
  db: Db,
  input: { licenseKey: string; deviceId: string; deviceName: string },
): Promise<CheckOutcome> {
  const key = lookupKey(input.licenseKey);
  if (!key) return { found: false };
  const check = await checkDevice(db, key, input.deviceId, input.deviceName);
  if (!check) return { found: false };
  const status = effectiveStatus(check.license, check.now);
  const refusal = refusalFor(status);
  if (refusal) return { found: true, body: { valid: false, error: refusal, ...basics(check.license, status) } };
  if (check.activation)
    return {
      found: true,
      body: validAnswer(check.license, check.addedCount ?? check.license.current_activations, check.activation),
    };
  // Nothing added (refused, at the limit, or registered meanwhile by a concurrent request): decide under the lock.
  return db.transaction(async (trx): Promise<CheckOutcome> => {
    const license = await lockLicenseByKey(trx, key);
    if (!license) return { found: false };
    const lockedStatus = effectiveStatus(license, new Date());
    const lockedRefusal = refusalFor(lockedStatus);
    if (lockedRefusal)
      return { found: true, body: { valid: false, error: lockedRefusal, ...basics(license, lockedStatus) } };
    // Seats of devices that fell silent are free now (D-102), this one's own included when it is dead.
    const held = (await releaseSilentActivations(trx, license.id)) ?? license.current_activations;
    // Another request may have registered this device while we waited for the lock.
    const existing = await findActivationRow(trx, license.id, input.deviceId);
    if (existing && existing.released_at === null) {
      const refreshed = await refreshActivationRow(trx, license.id, input.deviceId, input.deviceName);
      return { found: true, body: validAnswer(license, held, refreshed) };
    }
    const added = await insertActivationUnderLimit(trx, license, input.deviceId, input.deviceName);
    if (!added) {
      return {
        found: true,
        body: {
          valid: false,
          error: 'activation_limit_reached',
          ...basics(license, lockedStatus),
          maxActivations: license.max_activations,
          currentActivations: held,
        },
      };
    }
    return { found: true, body: validAnswer(license, added.currentActivations, added.activation) };
  });
}

/** What a heartbeat answers: 200 for a live activated device, else not found (it must validate again). */
export type HeartbeatOutcome =
  | { found: false }
  | { found: true; body: { valid: boolean; status: LicenseStatus; nextHeartbeatBefore: string | null } };

/**
 * D-102: a live device checks in, one statement. valid says whether the license may be used now (as
 * verify does); the device keeps its seat whatever the status, so a suspension lifted later finds it.
 */
export async function heartbeatDevice(
  db: Db,
  input: { licenseKey: string; deviceId: string },
): Promise<HeartbeatOutcome> {
  const key = lookupKey(input.licenseKey);
  if (!key) return { found: false };
  const row = await heartbeatActivation(db, key, input.deviceId);
  if (!row) return { found: false };
  const status = effectiveStatus(row, row.last_seen_at);
  return {
    found: true,
    body: {
      valid: status === 'active',
      status,
      nextHeartbeatBefore: iso(nextHeartbeatBefore(row.last_seen_at, row.heartbeat_interval_seconds)),
    },
  };
}
