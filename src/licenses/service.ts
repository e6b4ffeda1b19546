import type { Db } from '../db/knex.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.ts';
import { inTransaction } from '../db/knex.ts';
import { assertCustomerExists, customerNotFound } from '../customers/service.ts';
import { recordEvent } from '../events/service.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../http/schemas.ts';
import { assertProductExists, productNotFound } from '../products/service.ts';
import { getSetting, type SettingOverrides } from '../settings/service.ts';
import { generateLicenseKey, normaliseLicenseKey } from './key.ts';
import {
  deleteActivationRow, deleteLicenseRow, expireDueLicenseRows, findLicenseByKey, insertLicenseRow, listActivationRows, listLicenseRows,
  lockLicenseByKey, updateLicenseRow, type LicenseRow, type LicenseWrite,
} from './repo.ts';
import type { CreateLicenseInput, UpdateLicenseInput } from './schema.ts';
import { effectiveStatus } from './status.ts';
import { SYSTEM_ACTOR } from '../audit/actor.ts';
import { recordAudits } from '../audit/service.ts';

const KEY_ATTEMPTS = 5;
/** PostgreSQL's name for the `unique` on licenses.license_key (migration 20261122000200). */
const LICENSE_KEY_UNIQUE = 'licenses_license_key_key';

/** The license.* payload (D-74). */
export function licenseEventData(row: LicenseRow, now = new Date()) {
  return {
    licenseId: row.id,
    licenseKey: row.license_key,
    customerId: row.customer_id,
    productId: row.product_id,
    status: effectiveStatus(row, now),
    expiresAt: row.expires_at?.toISOString() ?? null,
  };
}

/**
 * Issues a license with a fresh key and records license.created, together (D-30, D-31).
 * `drawKey` is the key source; tests pass one that collides.
 */
export async function createLicense(
  db: Db,
  input: CreateLicenseInput,
  settings: SettingOverrides,
  drawKey: (prefix: string) => string = generateLicenseKey,
): Promise<LicenseRow> {
  await assertCustomerExists(db, input.customerId);
  await assertProductExists(db, input.productId);
  const prefix = await getSetting(db, 'licenses.key_prefix', settings);
  for (let attempt = 1; ; attempt++) {
    try {
      // db.transaction, not inTransaction: inside an outer transaction (an Idempotency-Key request)
      // this is a savepoint, so a collision rolls back only this attempt and the outer one goes on.
      return await db.transaction(async (trx) => {
        const row = await insertLicenseRow(trx, {
          license_key: drawKey(prefix),
          customer_id: input.customerId,
          product_id: input.productId,
          max_activations: input.maxActivations ?? null,
          features: input.features ?? {},
          expires_at: input.expiresAt ?? null,
        });
        await recordEvent(trx, 'license.created', licenseEventData(row));
        return row;
      });
    } catch (error) {
      // The customer or product was deleted since the checks above.
      if (isForeignKeyViolation(error)) {
        const constraint = (error as { constraint?: string }).constraint;
        if (constraint === 'licenses_customer_id_fkey') throw customerNotFound(input.customerId);
        if (constraint === 'licenses_product_id_fkey') throw productNotFound(input.productId);
      }
      // 60 random bits make a collision rare, but the unique index decides; draw again.
      if (!isUniqueViolation(error, LICENSE_KEY_UNIQUE) || attempt >= KEY_ATTEMPTS) throw error;
    }
  }
}

export function listLicenses(db: Db, page: PageQuery, filters: { customerId?: string; productId?: string; status?: string }) {
  return listLicenseRows(db, page, filters);
}

async function requireLicense(db: Db, key: string): Promise<LicenseRow> {
  const row = await findLicenseByKey(db, normaliseLicenseKey(key));
  if (!row) throw notFound('License');
  return row;
}

export const getLicense = requireLicense;

/**
 * PUT /api/licenses/:key (D-31, D-32). Revoked is final; a future expiresAt on an expired license
 * renews it; lowering maxActivations keeps the devices already activated.
 */
export async function updateLicense(db: Db, key: string, input: UpdateLicenseInput): Promise<LicenseRow> {
  return inTransaction(db, async (trx) => {
    const row = await lockLicenseByKey(trx, normaliseLicenseKey(key));
    if (!row) throw notFound('License');
    if (row.status === 'revoked' && input.status !== undefined && input.status !== 'revoked') {
      throw new AppError('license_revoked', 'A revoked license cannot change status');
    }
    const changes: LicenseWrite = {};
    if (input.maxActivations !== undefined) changes.max_activations = input.maxActivations;
    if (input.features !== undefined) changes.features = input.features;
    if (input.expiresAt !== undefined) changes.expires_at = input.expiresAt;
    const expiresAt = input.expiresAt !== undefined ? input.expiresAt : row.expires_at;
    const datePassed = expiresAt !== null && expiresAt.getTime() <= Date.now();
    if (row.status === 'expired' && datePassed) {
      // A stored expiry stands until a renewal date (the license reads expired either way):
      // storing active or suspended here would let the sweep store it again and record
      // license.expired twice for one expiry. Revoking is still stored.
      if (input.status === 'revoked') changes.status = 'revoked';
    } else if (input.status !== undefined) {
      changes.status = input.status;
    } else if (row.status === 'expired' && input.expiresAt !== undefined) {
      // A stored `expired` whose date moves into the future (or goes away) is a renewal.
      changes.status = 'active';
    }
    if (Object.keys(changes).length === 0) return row;
    return updateLicenseRow(trx, row.id, changes);
  });
}

export async function deleteLicense(db: Db, key: string): Promise<void> {
  const row = await requireLicense(db, key);
  await deleteLicenseRow(db, row.id);
}

export async function listActivations(db: Db, key: string) {
  const row = await requireLicense(db, key);
  return listActivationRows(db, row.id);
}

/**
 * Removes a device; its slot is free at once (D-35). The license row is locked first, as validate
 * locks it before touching a device, so the two never wait on each other in opposite orders.
 */
export async function removeActivation(db: Db, key: string, deviceId: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    const row = await lockLicenseByKey(trx, normaliseLicenseKey(key));
    if (!row) throw notFound('License');
    if (!(await deleteActivationRow(trx, row.id, deviceId))) throw notFound('Activation');
  });
}

/**
 * Stores `expired` on licenses whose date passed by `asOf` and records license.expired once for
 * each (D-32), in bounded batches that each commit with their events.
 */
export async function expireLicenses(db: Db, asOf: Date, batchSize = 500): Promise<number> {
  let total = 0;
  for (;;) {
    const expired = await inTransaction(db, async (trx) => {
      const rows = await expireDueLicenseRows(trx, asOf, batchSize);
      for (const row of rows) await recordEvent(trx, 'license.expired', licenseEventData(row, asOf));
      // Only the sweep expires licenses: recorded as `system` (C-11), set-wise.
      await recordAudits(trx, SYSTEM_ACTOR, rows.map((row) => ({ action: 'license.expire', targetType: 'license', targetId: row.license_key, before: { status: 'active' }, after: { status: row.status } })));
      return rows.length;
    });
    total += expired;
    if (expired < batchSize) return total;
  }
}
