import { fastQuery } from '../db/fast-query.ts';
import type { Db } from '../db/knex.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';
import { deadSql, silentSql } from './dead-device-sql.ts';

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

const LICENSE_COLUMNS =
  'id, license_key, customer_id, product_id, status, max_activations, current_activations, features, expires_at, ' +
  'heartbeat_interval_seconds, created_at, updated_at';

export type LicenseWrite = Partial<
  Pick<LicenseRow, 'status' | 'max_activations' | 'features' | 'expires_at' | 'heartbeat_interval_seconds'>
>;

const asJson = (changes: LicenseWrite) =>
  changes.features ? { ...changes, features: JSON.stringify(changes.features) } : changes;

export async function insertLicenseRow(
  db: Db,
  row: { license_key: string; customer_id: string; product_id: string } & LicenseWrite,
): Promise<LicenseRow> {
  const [created] = await db('licenses').insert(asJson(row)).returning('*');
  return created as LicenseRow;
}

export async function findLicenseByKey(db: Db, key: string): Promise<LicenseRow | undefined> {
  // The verify hot path: one indexed read, prepared (columns named, so a migration cannot change its result).
  const [row] = await fastQuery<LicenseRow>(
    db,
    `select ${LICENSE_COLUMNS} from licenses where license_key = $1`,
    [key],
    'licenses.find-by-key',
  );
  return row;
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
        .orWhere((past) => past.where('expires_at', '<=', db.fn.now()).whereNot('status', 'revoked')),
    );
  else if (filters.status === 'active')
    query.where({ status: 'active' }).where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', db.fn.now()));
  else if (filters.status === 'suspended')
    query
      .where({ status: 'suspended' })
      .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', db.fn.now()));
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
 * Removes a device and frees its slot (when it held one: a released device holds none) in one statement; the removed
 * activation, or undefined when the device was not activated.
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

export interface DeviceCheck {
  license: LicenseRow;
  /** The device's activation when it was known (refreshed) or added now; null when neither happened. */
  activation: ActivationRow | null;
  /** The license's count after adding this device, or null when nothing was added. */
  addedCount: number | null;
  now: Date;
}

/**
 * Validate's hot path in one round trip. A known live device of a license that can activate is
 * refreshed (name, lastSeenAt) without a lock. Only when the snapshot has no row for the device is the
 * license row locked; then, as the license stands after the lock, its dead devices (D-102) give up their
 * seats (released, each row locked and re-checked, so a heartbeat in flight for one of them either
 * lands first and keeps it alive, or finds it released and is refused), and the device is inserted
 * and counted if the license can activate and is under its limit. activation is null when nothing was
 * refreshed or added: refused, at the limit, a dead or released device validating again, or the device
 * registered meanwhile by a concurrent request; the caller then decides under the lock in a transaction.
 */
export async function checkDevice(
  db: Db,
  key: string,
  deviceId: string,
  deviceName: string,
): Promise<DeviceCheck | undefined> {
  const rows = await fastQuery<{
    license: Record<string, unknown>;
    activation: Record<string, unknown> | null;
    added_count: number | null;
    now: Date;
  }>(
    db,
    `with l as (select * from licenses where license_key = $1),
     seen as (
       update license_activations a set last_seen_at = now(), device_name = $2
         from l
        where a.license_id = l.id and a.device_id = $3
          and l.status = 'active' and (l.expires_at is null or l.expires_at > now())
          and not ${deadSql('a', 'l')}
       returning a.*),
     locked as (
       select * from licenses li
        where li.license_key = $1
          and not exists (select 1 from license_activations a where a.license_id = li.id and a.device_id = $3)
          and li.status = 'active' and (li.expires_at is null or li.expires_at > now())
       for update),
     released as (
       update license_activations a set released_at = now()
         from locked
        where a.license_id = locked.id and a.released_at is null and ${silentSql('a', 'locked')}
       returning a.device_id),
     ins as (
       insert into license_activations (license_id, device_id, device_name)
       select locked.id, $3, $2 from locked
        where locked.status = 'active' and (locked.expires_at is null or locked.expires_at > now())
          and (locked.max_activations is null
               or locked.current_activations - (select count(*) from released) < locked.max_activations)
       on conflict (license_id, device_id) do nothing
       returning *),
     bump as (
       update licenses set current_activations = licenses.current_activations
                                                   + (select count(*) from ins) - (select count(*) from released),
                           updated_at = now()
         from locked
        where licenses.id = locked.id and (exists (select 1 from ins) or exists (select 1 from released))
       returning licenses.current_activations)
     select coalesce((select row_to_json(locked.*) from locked), row_to_json(l.*)) as license,
            coalesce((select row_to_json(seen.*) from seen), (select row_to_json(ins.*) from ins)) as activation,
            (select current_activations from bump where exists (select 1 from ins)) as added_count, now() as now
       from l`,
    [key, deviceName, deviceId],
    'licenses.check-device',
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    license: reviveLicense(row.license),
    activation: row.activation ? reviveActivation(row.activation) : null,
    addedCount: row.added_count,
    now: row.now,
  };
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
export async function expireDueLicenseRows(db: Db, asOf: Date, batch: number): Promise<LicenseRow[]> {
  const result = await db.raw(
    `update licenses set status = 'expired', updated_at = now()
      where id in (select id from licenses where status = 'active' and expires_at <= ?
                    order by expires_at limit ? for update skip locked)
      returning *`,
    [asOf, batch],
  );
  return result.rows as LicenseRow[];
}

// row_to_json turns timestamps into strings; the rest of the code expects Dates.
function reviveLicense(json: Record<string, unknown>): LicenseRow {
  const row = json as unknown as LicenseRow;
  return {
    ...row,
    expires_at: row.expires_at ? new Date(row.expires_at) : null,
    created_at: new Date(row.created_at),
    updated_at: new Date(row.updated_at),
  };
}

function reviveActivation(json: Record<string, unknown>): ActivationRow {
  const row = json as unknown as ActivationRow;
  return {
    ...row,
    activated_at: new Date(row.activated_at),
    last_seen_at: new Date(row.last_seen_at),
    released_at: row.released_at ? new Date(row.released_at) : null,
  };
}
