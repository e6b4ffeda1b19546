/** Validate's one statement (D-34, D-102): check a device against its license and register it when it can. */
import type { Db } from '../db/knex.ts';
import { queryPrepared, type PreparedStatement } from '../db/prepared.ts';
import { deadSql, silentSql } from './dead-device-sql.ts';
import { canActivateSql, type ActivationRow, type LicenseRow } from './repo.ts';

export interface DeviceCheck {
  license: LicenseRow;
  /** The device's activation when it was known (refreshed) or added now; null when neither happened. */
  activation: ActivationRow | null;
  /** The license's count after adding this device, or null when nothing was added. */
  addedCount: number | null;
  now: Date;
}

/**
 * Validate's statement (see checkDevice): $1 the key, $2 the device id, $3 its name. Prepared: planning it cost
 * more than running it (figures in db/prepared.ts).
 */
const CHECK_DEVICE: PreparedStatement = {
  name: 'licenses.check-device',
  text: `with l as (select * from licenses where license_key = $1),
     seen as (
       update license_activations a set last_seen_at = now(), device_name = $3
         from l
        where a.license_id = l.id and a.device_id = $2 and ${canActivateSql('l')} and not ${deadSql('a', 'l')}
       returning a.*),
     locked as (
       select * from licenses li
        where li.license_key = $1
          and not exists (select 1 from license_activations a where a.license_id = li.id and a.device_id = $2)
          and ${canActivateSql('li')}
       for update),
     released as (
       update license_activations a set released_at = now()
         from locked
        where a.license_id = locked.id and a.released_at is null and ${silentSql('a', 'locked')}
       returning a.device_id),
     ins as (
       insert into license_activations (license_id, device_id, device_name)
       select locked.id, $2, $3 from locked
        where locked.max_activations is null
           or locked.current_activations - (select count(*) from released) < locked.max_activations
       on conflict (license_id, device_id) do nothing
       returning *),
     bump as (
       update licenses
          set current_activations = licenses.current_activations + (select count(*) from ins)
                                    - (select count(*) from released),
              updated_at = now()
         from locked
        where licenses.id = locked.id and (exists (select 1 from ins) or exists (select 1 from released))
       returning licenses.current_activations)
     select coalesce((select row_to_json(locked.*) from locked), row_to_json(l.*)) as license,
            coalesce((select row_to_json(seen.*) from seen), (select row_to_json(ins.*) from ins)) as activation,
            (select current_activations from bump where exists (select 1 from ins)) as added_count, now() as now
       from l`,
};

/**
 * Validate in one statement. A known live device of a license that can activate is refreshed (name, lastSeenAt)
 * without a lock. Only when the snapshot has no row for the device is the license row locked; then, as the
 * license stands after the lock, its dead devices (D-102) give up their seats (released, each row locked and
 * re-checked, so a heartbeat in flight for one of them either lands first and keeps it alive, or finds it released
 * and is refused), and the device is inserted and counted if the license is under its limit. activation is null
 * when nothing was refreshed or added: refused, at the limit, a dead or released device validating again, or the
 * device registered meanwhile by a concurrent request; the caller then decides under the lock in a transaction.
 */
export async function checkDevice(
  db: Db,
  key: string,
  deviceId: string,
  deviceName: string,
): Promise<DeviceCheck | undefined> {
  const [row] = await queryPrepared<{
    license: Record<string, unknown>;
    activation: Record<string, unknown> | null;
    added_count: number | null;
    now: Date;
  }>(db, CHECK_DEVICE, [key, deviceId, deviceName]);
  if (!row) return undefined;
  return {
    license: reviveLicense(row.license),
    activation: row.activation ? reviveActivation(row.activation) : null,
    addedCount: row.added_count,
    now: row.now,
  };
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
