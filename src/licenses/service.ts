import { queueEmails } from '../emails/outbox.ts';
import { licenseIssuedEmail } from './license-email.ts';
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { customerClockIds } from '../db/clock-scope.ts';
import type { Db } from '../db/knex.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.ts';
import { inTransaction } from '../db/knex.ts';
import type { Page, PageQuery } from '../db/paginate.ts';
import { nowForCustomer } from '../customers/clock.ts';
import { assertCustomerExists, customerIdsMatching, customerNotFound } from '../customers/service.ts';
import { recordEvents } from '../events/service.ts';
import { AppError, notFound } from '../errors.ts';
import { assertProductExists, productNotFound } from '../products/service.ts';
import { getSetting, type SettingOverrides } from '../settings/service.ts';
import { generateLicenseKey, normaliseLicenseKey } from './key.ts';
import {
  deleteActivationRow,
  deleteLicenseRow,
  findLicenseByKey,
  insertLicenseRow,
  listActivationRows,
  listLicenseRows,
  lockLicenseByKey,
  recentActivationRows,
  updateLicenseRow,
  type ActivationRow,
  type LicenseRow,
  type LicenseWrite,
} from './repo.ts';
import type { CreateLicenseInput, SettableStatus, UpdateLicenseInput } from './schema.ts';
import { effectiveStatus } from './status.ts';

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

/** The audit log's target of a license (C-11): its key, the name admins and integrators know it by. */
export const TARGET_TYPE = 'license';

/**
 * A license's fields as the audit log records them: what an admin sets, and whose it is. Never the key (it is the
 * target id).
 */
function audited(row: LicenseRow): Record<string, unknown> {
  const { customer_id, product_id, status, max_activations, features, expires_at, heartbeat_interval_seconds } = row;
  return { customer_id, product_id, status, max_activations, features, expires_at, heartbeat_interval_seconds };
}

/** A removed device as its audit row's `before`. */
function auditedDevice(row: ActivationRow): Record<string, unknown> {
  const { device_id, device_name, activated_at, last_seen_at } = row;
  return { device_id, device_name, activated_at, last_seen_at };
}

/** The action a status the admin set is recorded as; a write that sets no new status is `license.update`. */
const STATUS_ACTIONS: Record<SettableStatus, string> = {
  active: 'license.reinstate',
  suspended: 'license.suspend',
  revoked: 'license.revoke',
};

/**
 * Issues a license with a fresh key and records license.created and its audit row, together (D-30, D-31, C-11).
 * `drawKey` is the key source; tests pass one that collides.
 */
export async function createLicense(
  db: Db,
  input: CreateLicenseInput,
  settings: SettingOverrides,
  actor: Actor,
  drawKey: (prefix: string) => string = generateLicenseKey,
): Promise<LicenseRow> {
  await assertCustomerExists(db, input.customerId);
  await assertProductExists(db, input.productId);
  const prefix = await getSetting(db, 'licenses.key_prefix', settings);
  // TC-2: a clock customer's license is dated by the clock, born expired when its date is not ahead of the clock,
  // and from then on expired by the clock's advances (repo.ts datePassedSql), never by today's date.
  const clockId = (await customerClockIds(db, [input.customerId])).get(input.customerId) ?? null;
  const clockNow = clockId ? await nowForCustomer(db, input.customerId) : undefined;
  const bornExpired = Boolean(clockNow && input.expiresAt && input.expiresAt.getTime() <= clockNow.getTime());
  const onClock = clockId ? { test_clock_id: clockId, created_at: clockNow } : {};
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
          heartbeat_interval_seconds: input.heartbeatIntervalSeconds ?? null,
          ...onClock,
          ...(bornExpired ? { status: 'expired' } : {}),
        });
        const data = licenseEventData(row, clockNow);
        await recordEvents(trx, [
          { type: 'license.created', data },
          ...(bornExpired ? [{ type: 'license.expired' as const, data }] : []),
        ]);
        await queueEmails(trx, [licenseIssuedEmail(row)]);
        await recordAudits(trx, actor, [
          {
            action: 'license.create',
            targetType: TARGET_TYPE,
            targetId: row.license_key,
            after: audited(row),
          },
        ]);
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

/** At most this many customers a console search's words name are looked for (decisions: licenses console). */
const SEARCH_CUSTOMERS = 500;
/** What a key typed in part can hold once normalised (D-30): the prefix, the groups, the hyphens. */
const KEY_PREFIX_TEXT = /^[A-Z0-9-]+$/;

export interface LicenseListFilters {
  customerId?: string;
  productId?: string;
  status?: string;
  /** The console's search: a key's beginning, or words of a customer's name, company or email (D-23). */
  q?: string;
}

/**
 * Licenses by creation (newest first when asked), filtered; `q` matches a key prefix or the customers the customer
 * search finds.
 */
export async function listLicenses(db: Db, page: PageQuery, filters: LicenseListFilters): Promise<Page<LicenseRow>> {
  const { q, ...exact } = filters;
  if (q === undefined) return listLicenseRows(db, page, exact);
  const typed = normaliseLicenseKey(q);
  const keyPrefix = KEY_PREFIX_TEXT.test(typed) ? typed : undefined;
  const customerIds = await customerIdsMatching(db, q, SEARCH_CUSTOMERS);
  if (!keyPrefix && customerIds.length === 0) return { rows: [], hasMore: false };
  return listLicenseRows(db, page, { ...exact, match: { keyPrefix, customerIds } });
}

async function requireLicense(db: Db, key: string): Promise<LicenseRow> {
  const row = await findLicenseByKey(db, normaliseLicenseKey(key));
  if (!row) throw notFound('License');
  return row;
}

export const getLicense = requireLicense;

/**
 * PUT /api/licenses/:key (D-31, D-32). Revoked is final; a future expiresAt on an expired license
 * renews it; lowering maxActivations keeps the devices already activated. Records one audit row: the
 * status verb when the admin set a new status, else license.update (C-11).
 */
export async function updateLicense(db: Db, key: string, input: UpdateLicenseInput, actor: Actor): Promise<LicenseRow> {
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
    if (input.heartbeatIntervalSeconds !== undefined)
      changes.heartbeat_interval_seconds = input.heartbeatIntervalSeconds;
    const expiresAt = input.expiresAt !== undefined ? input.expiresAt : row.expires_at;
    const now = row.test_clock_id ? await nowForCustomer(trx, row.customer_id) : new Date();
    const datePassed = expiresAt !== null && expiresAt.getTime() <= now.getTime();
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
    // TC-2: a clock license's date is judged here and by its clock's advances only: a date now behind the clock
    // stores `expired` (as the advance would), told with license.expired.
    const clockExpires =
      row.test_clock_id !== null && datePassed && ['active', 'suspended'].includes(changes.status ?? row.status);
    if (clockExpires) changes.status = 'expired';
    // An accepted update is an admin action even when it stores nothing: it is recorded (with no field).
    const updated = Object.keys(changes).length === 0 ? row : await updateLicenseRow(trx, row.id, changes);
    if (clockExpires) await recordEvents(trx, [{ type: 'license.expired', data: licenseEventData(updated, now) }]);
    const action =
      input.status !== undefined && updated.status !== row.status ? STATUS_ACTIONS[input.status] : 'license.update';
    await recordAudits(trx, actor, [
      {
        action,
        targetType: TARGET_TYPE,
        targetId: row.license_key,
        before: audited(row),
        after: audited(updated),
      },
    ]);
    return updated;
  });
}

export async function deleteLicense(db: Db, key: string, actor: Actor): Promise<void> {
  await inTransaction(db, async (trx) => {
    const row = await lockLicenseByKey(trx, normaliseLicenseKey(key));
    if (!row) throw notFound('License');
    await deleteLicenseRow(trx, row.id);
    await recordAudits(trx, actor, [
      {
        action: 'license.delete',
        targetType: TARGET_TYPE,
        targetId: row.license_key,
        before: { ...audited(row), current_activations: row.current_activations },
      },
    ]);
  });
}

export async function listActivations(db: Db, key: string) {
  const row = await requireLicense(db, key);
  return listActivationRows(db, row.id);
}

/** A license with its `limit` most recently activated devices (the console's page). */
export async function getLicenseWithDevices(
  db: Db,
  key: string,
  limit: number,
): Promise<{ license: LicenseRow; activations: ActivationRow[] }> {
  const license = await requireLicense(db, key);
  return { license, activations: await recentActivationRows(db, license.id, limit) };
}

/**
 * Removes a device; its slot is free at once (D-35). The license row is locked first, as validate
 * locks it before touching a device, so the two never wait on each other in opposite orders.
 * The audit row's `before` is the device removed (C-11).
 */
export async function removeActivation(db: Db, key: string, deviceId: string, actor: Actor): Promise<void> {
  await inTransaction(db, async (trx) => {
    const row = await lockLicenseByKey(trx, normaliseLicenseKey(key));
    if (!row) throw notFound('License');
    const removed = await deleteActivationRow(trx, row.id, deviceId);
    if (!removed) throw notFound('Activation');
    await recordAudits(trx, actor, [
      {
        action: 'license.device_remove',
        targetType: TARGET_TYPE,
        targetId: row.license_key,
        before: auditedDevice(removed),
      },
    ]);
  });
}
