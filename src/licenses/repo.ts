import { customerScopeSql, type CustomerScope } from '../db/clock-scope.ts';
import type { Db } from '../db/knex.ts';
import { queryPrepared, type PreparedStatement } from '../db/prepared.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';

export interface LicenseRow {
  id: string;
  license_key: string;
  customer_id: string;
  product_id: string;
  status: string;
  max_activations: number | null;
  current_activations: number;
  features: Record<string, unknown>;
  expires_at: Date | null;
  /** D-102: devices must check in this often; null when heartbeats are off. */
  heartbeat_interval_seconds: number | null;
  /** TC-2: the customer's test clock, whose moves store the license's expiry; null for a real customer's. */
  test_clock_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ActivationRow {
  license_id: string;
  device_id: string;
  device_name: string;
  activated_at: Date;
  last_seen_at: Date;
  /** When a new device's validate took this dead device's seat; the row waits for the sweep to cull it. */
  released_at: Date | null;
}

const LICENSE_COLUMNS = [
  'id',
  'license_key',
  'customer_id',
  'product_id',
  'status',
  'max_activations',
  'current_activations',
  'features',
  'expires_at',
  'heartbeat_interval_seconds',
  'test_clock_id',
  'created_at',
  'updated_at',
];

/**
 * Whether license `l`'s date has passed now: never for a clock customer's license, whose date is judged by its clock
 * (TC-2: its creation, its updates and the clock's advances store `expired` at the clock's time); status.ts
 * `effectiveStatus` is the same rule for a row in hand.
 */
const datePassedSql = (l: string) => `(${l}.test_clock_id is null and ${l}.expires_at <= now())`;

/**
 * D-34's rule in SQL, the one place it is written: license `l` can activate a device now (stored `active`, and its
 * date, if any, not passed). Used by validate's statement (device-check-repo.ts) and the list's `active` filter;
 * status.ts `effectiveStatus` is the same rule for a row in hand (`active` there).
 */
export const canActivateSql = (l: string) =>
  `(${l}.status = 'active' and (${l}.expires_at is null or not ${datePassedSql(l)}))`;

export type LicenseWrite = Partial<
  Pick<LicenseRow, 'status' | 'max_activations' | 'features' | 'expires_at' | 'heartbeat_interval_seconds'>
>;

const asJson = (changes: LicenseWrite) =>
  changes.features ? { ...changes, features: JSON.stringify(changes.features) } : changes;

export async function insertLicenseRow(
  db: Db,
  row: { license_key: string; customer_id: string; product_id: string } & LicenseWrite &
    Partial<Pick<LicenseRow, 'test_clock_id' | 'created_at'>>,
): Promise<LicenseRow> {
  const [created] = await db('licenses').insert(asJson(row)).returning('*');
  return created as LicenseRow;
}

// Prepared: the verify path (figures in db/prepared.ts).
const LICENSE_BY_KEY: PreparedStatement = {
  name: 'licenses.by-key',
  text: `select ${LICENSE_COLUMNS.join(', ')} from licenses where license_key = $1`,
};

export async function findLicenseByKey(db: Db, key: string): Promise<LicenseRow | undefined> {
  const [row] = await queryPrepared<LicenseRow>(db, LICENSE_BY_KEY, [key]);
  return row;
}

export async function findLicenseById(db: Db, id: string): Promise<LicenseRow | undefined> {
  return db('licenses').where({ id }).first(LICENSE_COLUMNS);
}

/** The license row locked for the rest of the transaction: activations of one license happen one at a time. */
export async function lockLicenseByKey(db: Db, key: string): Promise<LicenseRow | undefined> {
  return db('licenses').where({ license_key: key }).forUpdate().first();
}

/**
 * List filters. `match` is a search (the console's `q`): licenses whose key starts with `keyPrefix` (the
 * `licenses_key_prefix` index) or that belong to one of `customerIds`.
 */
export interface LicenseRowFilters {
  customerId?: string;
  productId?: string;
  status?: string;
  match?: { keyPrefix?: string; customerIds: string[] };
}

export async function listLicenseRows(db: Db, page: PageQuery, filters: LicenseRowFilters): Promise<Page<LicenseRow>> {
  const query = db('licenses').select('*');
  const { match } = filters;
  if (match) {
    query.where((q) => {
      // keyPrefix holds only [A-Z0-9-] (service.ts), so no LIKE wildcard can come from the user.
      if (match.keyPrefix) q.orWhere('license_key', 'like', `${match.keyPrefix}%`);
      if (match.customerIds.length > 0) q.orWhereRaw('customer_id = any(?::uuid[])', [match.customerIds]);
      if (!match.keyPrefix && match.customerIds.length === 0) q.whereRaw('false');
    });
  }
  if (filters.customerId) query.where({ customer_id: filters.customerId });
  if (filters.productId) query.where({ product_id: filters.productId });
  // The filters match effectiveStatus (status.ts).
  if (filters.status === 'expired')
    query.where((q) =>
      q
        .where({ status: 'expired' })
        .orWhere((past) => past.whereRaw(datePassedSql('licenses')).whereNot('status', 'revoked')),
    );
  else if (filters.status === 'active') query.whereRaw(canActivateSql('licenses'));
  else if (filters.status === 'suspended')
    query.where({ status: 'suspended' }).whereRaw(`(expires_at is null or not ${datePassedSql('licenses')})`);
  else if (filters.status) query.where({ status: filters.status });
  return paginate<LicenseRow>(query, 'licenses', page);
}

export async function updateLicenseRow(db: Db, id: string, changes: LicenseWrite): Promise<LicenseRow> {
  const [row] = await db('licenses')
    .where({ id })
    .update({ ...asJson(changes), updated_at: db.fn.now() })
    .returning('*');
  return row as LicenseRow;
}

export async function deleteLicenseRow(db: Db, id: string): Promise<void> {
  await db('licenses').where({ id }).delete();
}

export async function listActivationRows(db: Db, licenseId: string): Promise<ActivationRow[]> {
  return db('license_activations')
    .where({ license_id: licenseId })
    .orderBy([{ column: 'activated_at' }, { column: 'device_id' }]);
}

/** The `limit` most recently activated devices of a license, newest first (the console's page). */
export async function recentActivationRows(db: Db, licenseId: string, limit: number): Promise<ActivationRow[]> {
  return db('license_activations')
    .where({ license_id: licenseId })
    .orderBy([
      { column: 'activated_at', order: 'desc' },
      { column: 'device_id', order: 'desc' },
    ])
    .limit(limit);
}

/**
 * Removes a device and frees its slot (when it held one: a released device holds none) in one statement; the
 * removed activation, or undefined when the device was not activated.
 */
export async function deleteActivationRow(
  db: Db,
  licenseId: string,
  deviceId: string,
): Promise<ActivationRow | undefined> {
  const result = await db.raw(
    `with gone as (delete from license_activations where license_id = ? and device_id = ? returning *),
     freed as (update licenses set current_activations = current_activations - 1, updated_at = now()
                where id in (select license_id from gone where released_at is null))
     select * from gone`,
    [licenseId, deviceId],
  );
  return (result.rows as ActivationRow[])[0];
}

/**
 * Adds a device to a locked license under its limit; null when the limit is reached. A device whose
 * released row is still there (not yet culled) comes back as a new activation, on that row.
 */
export async function insertActivationUnderLimit(
  db: Db,
  license: LicenseRow,
  deviceId: string,
  deviceName: string,
): Promise<{ activation: ActivationRow; currentActivations: number } | null> {
  const bumped = await db('licenses')
    .where({ id: license.id })
    .where((q) => q.whereNull('max_activations').orWhere('current_activations', '<', db.ref('max_activations')))
    .update({ current_activations: db.raw('current_activations + 1'), updated_at: db.fn.now() })
    .returning('current_activations');
  if (bumped.length === 0) return null;
  const [activation] = await db('license_activations')
    .insert({ license_id: license.id, device_id: deviceId, device_name: deviceName })
    .onConflict(['license_id', 'device_id'])
    .merge({ device_name: deviceName, activated_at: db.fn.now(), last_seen_at: db.fn.now(), released_at: null })
    .returning('*');
  return {
    activation: activation as ActivationRow,
    currentActivations: (bumped[0] as { current_activations: number }).current_activations,
  };
}

export async function findActivationRow(
  db: Db,
  licenseId: string,
  deviceId: string,
): Promise<ActivationRow | undefined> {
  return db('license_activations').where({ license_id: licenseId, device_id: deviceId }).first();
}

export async function refreshActivationRow(
  db: Db,
  licenseId: string,
  deviceId: string,
  deviceName: string,
): Promise<ActivationRow> {
  const [row] = await db('license_activations')
    .where({ license_id: licenseId, device_id: deviceId })
    .update({ device_name: deviceName, last_seen_at: db.fn.now() })
    .returning('*');
  return row as ActivationRow;
}

/** Stores `expired` on active licenses whose date has passed, a bounded batch at a time. */
export async function expireDueLicenseRows(
  db: Db,
  asOf: Date,
  batch: number,
  scope: CustomerScope,
): Promise<LicenseRow[]> {
  const inScope = customerScopeSql(scope, 'licenses.customer_id');
  const result = await db.raw(
    `update licenses set status = 'expired', updated_at = now()
      where id in (select id from licenses where status = 'active' and expires_at <= ? and ${inScope.sql}
                    order by expires_at limit ? for update skip locked)
      returning *`,
    [asOf, ...inScope.bindings, batch],
  );
  return result.rows as LicenseRow[];
}
