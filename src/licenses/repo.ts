import { fastQuery } from '../db/fast-query.ts';
import type { Db } from '../db/knex.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';

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
  created_at: Date;
  updated_at: Date;
}

export interface ActivationRow {
  license_id: string;
  device_id: string;
  device_name: string;
  activated_at: Date;
  last_seen_at: Date;
}

export type LicenseWrite = Partial<Pick<LicenseRow, 'status' | 'max_activations' | 'features' | 'expires_at'>>;

const asJson = (changes: LicenseWrite) => (changes.features ? { ...changes, features: JSON.stringify(changes.features) } : changes);

export async function insertLicenseRow(db: Db, row: { license_key: string; customer_id: string; product_id: string } & LicenseWrite): Promise<LicenseRow> {
  const [created] = await db('licenses').insert(asJson(row)).returning('*');
  return created as LicenseRow;
}

export async function findLicenseByKey(db: Db, key: string): Promise<LicenseRow | undefined> {
  // The verify hot path: one indexed read.
  const [row] = await fastQuery<LicenseRow>(db, 'select * from licenses where license_key = $1', [key]);
  return row;
}

/** The license row locked for the rest of the transaction: activations of one license happen one at a time. */
export async function lockLicenseByKey(db: Db, key: string): Promise<LicenseRow | undefined> {
  return db('licenses').where({ license_key: key }).forUpdate().first();
}

export async function listLicenseRows(db: Db, page: PageQuery, filters: { customerId?: string; productId?: string; status?: string }): Promise<Page<LicenseRow>> {
  const query = db('licenses').select('*');
  if (filters.customerId) query.where({ customer_id: filters.customerId });
  if (filters.productId) query.where({ product_id: filters.productId });
  if (filters.status === 'expired') query.where((q) => q.where('expires_at', '<=', db.fn.now()).whereNot('status', 'revoked'));
  else if (filters.status === 'active') query.whereIn('status', ['active', 'expired']).where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', db.fn.now()));
  else if (filters.status === 'suspended') query.where({ status: 'suspended' }).where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', db.fn.now()));
  else if (filters.status) query.where({ status: filters.status });
  return paginate<LicenseRow>(query, 'licenses', page);
}

export async function updateLicenseRow(db: Db, id: string, changes: LicenseWrite): Promise<LicenseRow> {
  const [row] = await db('licenses').where({ id }).update({ ...asJson(changes), updated_at: db.fn.now() }).returning('*');
  return row as LicenseRow;
}

export async function deleteLicenseRow(db: Db, id: string): Promise<void> {
  await db('licenses').where({ id }).delete();
}

export async function listActivationRows(db: Db, licenseId: string): Promise<ActivationRow[]> {
  return db('license_activations').where({ license_id: licenseId }).orderBy([{ column: 'activated_at' }, { column: 'device_id' }]);
}

/** Removes a device and frees its slot in one statement; false when the device was not activated. */
export async function deleteActivationRow(db: Db, licenseId: string, deviceId: string): Promise<boolean> {
  const result = await db.raw(
    `with gone as (delete from license_activations where license_id = ? and device_id = ? returning license_id)
     update licenses set current_activations = current_activations - 1, updated_at = now()
      where id in (select license_id from gone) returning id`,
    [licenseId, deviceId],
  );
  return result.rows.length > 0;
}

export interface KnownDeviceCheck {
  license: LicenseRow;
  activation: ActivationRow | null;
  now: Date;
}

/**
 * The hot path of validate in one round trip: reads the license and, when it can activate and the
 * device is already known, refreshes that device's name and lastSeenAt. activation is null when the
 * device is new or the license cannot activate.
 */
export async function checkKnownDevice(db: Db, key: string, deviceId: string, deviceName: string): Promise<KnownDeviceCheck | undefined> {
  const rows = await fastQuery<Record<string, any>>(
    db,
    `with l as (select * from licenses where license_key = $1),
          seen as (
            update license_activations a set last_seen_at = now(), device_name = $2
              from l
             where a.license_id = l.id and a.device_id = $3
               and l.status in ('active', 'expired') and (l.expires_at is null or l.expires_at > now())
            returning a.*)
     select row_to_json(l.*) as license, (select row_to_json(seen.*) from seen) as activation, now() as now from l`,
    [key, deviceName, deviceId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return { license: reviveLicense(row.license), activation: row.activation ? reviveActivation(row.activation) : null, now: row.now };
}

/**
 * The common case of a new device in one statement: locks the license row, inserts the device when
 * the license can activate and is under its limit, and counts it only when the insert happened.
 * activation is null when nothing was added (refused, at the limit, or registered meanwhile by a
 * concurrent request); the caller then decides under the lock in a transaction.
 */
export async function activateNewDevice(db: Db, key: string, deviceId: string, deviceName: string): Promise<{ license: LicenseRow; activation: ActivationRow | null; currentActivations: number | null } | undefined> {
  const rows = await fastQuery<Record<string, any>>(
    db,
    `with l as (select * from licenses where license_key = $1 for update),
     ins as (
       insert into license_activations (license_id, device_id, device_name)
       select l.id, $2, $3 from l
        where l.status in ('active', 'expired') and (l.expires_at is null or l.expires_at > now())
          and (l.max_activations is null or l.current_activations < l.max_activations)
       on conflict (license_id, device_id) do nothing
       returning *),
     bump as (
       update licenses set current_activations = licenses.current_activations + 1, updated_at = now()
         from ins where licenses.id = ins.license_id
       returning licenses.current_activations)
     select row_to_json(l.*) as license, (select row_to_json(ins.*) from ins) as activation,
            (select current_activations from bump) as current_activations from l`,
    [key, deviceId, deviceName],
  );
  const row = rows[0];
  if (!row) return undefined;
  return { license: reviveLicense(row.license), activation: row.activation ? reviveActivation(row.activation) : null, currentActivations: row.current_activations };
}

/** Adds a device to a locked license under its limit; null when the limit is reached. */
export async function insertActivationUnderLimit(db: Db, license: LicenseRow, deviceId: string, deviceName: string): Promise<{ activation: ActivationRow; currentActivations: number } | null> {
  const bumped = await db('licenses')
    .where({ id: license.id })
    .where((q) => q.whereNull('max_activations').orWhere('current_activations', '<', db.ref('max_activations')))
    .update({ current_activations: db.raw('current_activations + 1'), updated_at: db.fn.now() })
    .returning('current_activations');
  if (bumped.length === 0) return null;
  const [activation] = await db('license_activations').insert({ license_id: license.id, device_id: deviceId, device_name: deviceName }).returning('*');
  return { activation: activation as ActivationRow, currentActivations: (bumped[0] as { current_activations: number }).current_activations };
}

export async function findActivationRow(db: Db, licenseId: string, deviceId: string): Promise<ActivationRow | undefined> {
  return db('license_activations').where({ license_id: licenseId, device_id: deviceId }).first();
}

export async function refreshActivationRow(db: Db, licenseId: string, deviceId: string, deviceName: string): Promise<ActivationRow> {
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
      where id in (select id from licenses where status = 'active' and expires_at <= ? order by expires_at limit ? for update skip locked)
      returning *`,
    [asOf, batch],
  );
  return result.rows as LicenseRow[];
}

// row_to_json turns timestamps into strings; the rest of the code expects Dates.
function reviveLicense(json: Record<string, unknown>): LicenseRow {
  const row = json as unknown as LicenseRow;
  return { ...row, expires_at: row.expires_at ? new Date(row.expires_at) : null, created_at: new Date(row.created_at), updated_at: new Date(row.updated_at) };
}

function reviveActivation(json: Record<string, unknown>): ActivationRow {
  const row = json as unknown as ActivationRow;
  return { ...row, activated_at: new Date(row.activated_at), last_seen_at: new Date(row.last_seen_at) };
}
