/**
 * License files (D-101): a signed copy of a license that a device verifies offline until it expires.
 * Checked out by an activated device (public) or by an admin for any device or none (an air-gapped
 * machine that can never validate online). Only an active license is written into a file.
 */
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import type { Keyring } from '../crypto/envelope.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import { AppError, notFound } from '../errors.ts';
import { getSettingCached } from '../settings/cache.ts';
import type { SettingOverrides } from '../settings/service.ts';
import { LICENSE_KEY_PATTERN, normaliseLicenseKey } from './key.ts';
import { signLicenseFile, type LicenseFilePayload } from './license-file.ts';
import { findCheckoutRow, type CheckoutRow } from './license-file-repo.ts';
import { currentSigningKey, signingKeyOf } from './signing-keys.ts';
import { effectiveStatus, refusalFor } from './status.ts';

export interface CheckedOutFile {
  licenseFile: string;
  issuedAt: Date;
  expiresAt: Date;
  kid: string;
}

/** What a checkout needs besides its input: the keyring that opens the signing key, and setting overrides. */
export interface CheckoutContext {
  keyring: Keyring;
  settings: SettingOverrides;
}

const REFUSAL_MESSAGES = {
  license_suspended: 'The license is suspended',
  license_expired: 'The license has expired',
  license_revoked: 'The license is revoked',
} as const;

/**
 * The license as a checkout may sign it: known and active now (D-34's refusals otherwise). An unknown key is the
 * admin API's not_found on its `:key` path, and on the public endpoint D-34's (and D-33's) `license_not_found`.
 */
function assertCheckoutAllowed(row: CheckoutRow | undefined, unknown: () => AppError): asserts row is CheckoutRow {
  if (!row) throw unknown();
  const refusal = refusalFor(effectiveStatus(row, row.now));
  if (refusal) throw new AppError(refusal, REFUSAL_MESSAGES[refusal]);
}

async function writeFile(
  db: Db,
  row: CheckoutRow,
  deviceId: string | null,
  ttlSeconds: number | undefined,
  context: CheckoutContext,
): Promise<CheckedOutFile> {
  const ttl = ttlSeconds ?? (await getSettingCached(db, 'licenses.file_ttl_days', context.settings)) * 86_400;
  const issuedAt = row.now;
  // A file never outlives its license: the client then has one date to check.
  const fileEnd = issuedAt.getTime() + ttl * 1000;
  const expiresAt = new Date(row.expires_at ? Math.min(fileEnd, row.expires_at.getTime()) : fileEnd);
  const current =
    row.kid && row.key_encryption
      ? { kid: row.kid, encryption: row.key_encryption }
      : await currentSigningKey(db, context.keyring);
  const payload: LicenseFilePayload = {
    license: {
      id: row.id,
      licenseKey: row.license_key,
      customerId: row.customer_id,
      productId: row.product_id,
      status: 'active',
      features: row.features,
      maxActivations: row.max_activations,
      expiresAt: row.expires_at?.toISOString() ?? null,
    },
    deviceId,
    issuedAt: issuedAt.toISOString(),
    expiresAt: expiresAt.toISOString(),
  };
  const privateKey = await signingKeyOf(db, current, context.keyring);
  return { licenseFile: signLicenseFile(payload, current.kid, privateKey), issuedAt, expiresAt, kid: current.kid };
}

/** POST /api/licenses/checkout: for a device activated on the license (409 device_not_activated otherwise). */
export async function checkOutForDevice(
  db: Db,
  input: { licenseKey: string; deviceId: string; ttlSeconds?: number },
  context: CheckoutContext,
): Promise<CheckedOutFile> {
  const key = normaliseLicenseKey(input.licenseKey);
  // A guess of the wrong shape never reaches the database (as verify and validate).
  const row = LICENSE_KEY_PATTERN.test(key) ? await findCheckoutRow(db, key, input.deviceId) : undefined;
  assertCheckoutAllowed(row, () => new AppError('license_not_found', 'No license has this key'));
  if (!row.activated)
    throw new AppError('device_not_activated', 'This device is not activated on the license: validate it first');
  return writeFile(db, row, input.deviceId, input.ttlSeconds, context);
}

/** POST /api/licenses/:key/checkout: an admin's file, for a named device or none; one audit row (C-11). */
export async function checkOutAsAdmin(
  db: Db,
  licenseKey: string,
  input: { deviceId?: string; ttlSeconds?: number },
  context: CheckoutContext,
  actor: Actor,
): Promise<CheckedOutFile> {
  return inTransaction(db, async (trx) => {
    const row = await findCheckoutRow(trx, normaliseLicenseKey(licenseKey), input.deviceId ?? null);
    assertCheckoutAllowed(row, () => notFound('License'));
    const file = await writeFile(trx, row, input.deviceId ?? null, input.ttlSeconds, context);
    await recordAudits(trx, actor, [
      {
        action: 'license.checkout',
        targetType: 'license',
        targetId: row.license_key,
        after: {
          device_id: input.deviceId ?? null,
          kid: file.kid,
          issued_at: file.issuedAt,
          expires_at: file.expiresAt,
        },
      },
    ]);
    return file;
  });
}
