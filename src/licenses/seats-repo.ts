/**
 * SQL of floating seats (D-102): heartbeats, releasing seats and the sweep's batch (the dead-device rule is
 * dead-device-sql.ts).
 */
import type { Db } from '../db/knex.ts';
import { deadSql, silentSql } from './dead-device-sql.ts';
import type { ActivationRow } from './repo.ts';

/**
 * On a locked license: its silent devices give up their seats (D-102), in one statement. The count of
 * seats held afterwards, or null when no device was silent.
 */
export async function releaseSilentActivations(db: Db, licenseId: string): Promise<number | null> {
  const result = await db.raw(
    `with released as (
       update license_activations a set released_at = now()
         from licenses l
        where l.id = ? and a.license_id = l.id and a.released_at is null and ${silentSql('a', 'l')}
       returning 1)
     update licenses set current_activations = current_activations - (select count(*) from released), updated_at = now()
      where id = ? and exists (select 1 from released)
     returning current_activations`,
    [licenseId, licenseId],
  );
  return (result.rows as { current_activations: number }[])[0]?.current_activations ?? null;
}

/** What a heartbeat answers from: the license's status fields and the device's new lastSeenAt. */
export interface HeartbeatRow {
  status: string;
  expires_at: Date | null;
  test_clock_id: string | null;
  heartbeat_interval_seconds: number | null;
  last_seen_at: Date;
}

/**
 * D-102 heartbeat in one statement: refreshes lastSeenAt of a live device, whatever the license's status
 * (a suspended license keeps its devices' seats until it is reinstated or they fall silent). undefined
 * for an unknown key, device, or a dead one. A validate releasing the device at the same moment holds its
 * row: this waits, re-checks the row and finds it released.
 */
export async function heartbeatActivation(db: Db, key: string, deviceId: string): Promise<HeartbeatRow | undefined> {
  const result = await db.raw<{ rows: HeartbeatRow[] }>(
    `update license_activations a set last_seen_at = now()
       from licenses l
      where l.license_key = ? and a.license_id = l.id and a.device_id = ? and not ${deadSql('a', 'l')}
      returning l.status, l.expires_at, l.test_clock_id, l.heartbeat_interval_seconds, a.last_seen_at`,
    [key, deviceId],
  );
  return result.rows[0];
}

/** A culled device with its license's key (the device_culled payload). */
export type CulledActivation = ActivationRow & { license_key: string };

/**
 * The sweep's batch (D-102): deletes the dead activations of up to `batch` licenses that have some, set-wise.
 * Each license is locked first (skipping those another sweep or a validate holds: they are taken next time),
 * as validate and device removal lock it, and its count drops by the culled devices that still held a seat.
 * A heartbeat landing first keeps its device (the delete re-checks the row); one landing after finds it gone.
 */
export async function cullDeadActivationRows(db: Db, batch: number): Promise<CulledActivation[]> {
  const result = await db.raw(
    `with due as (
       (select a.license_id from licenses l join license_activations a on a.license_id = l.id
         where ${silentSql('a', 'l')}
        union
        select license_id from license_activations where released_at is not null)
       limit ?),
     locked as (select id, license_key, heartbeat_interval_seconds from licenses
                 where id in (select license_id from due) for update skip locked),
     gone as (
       delete from license_activations a using locked l
        where a.license_id = l.id and ${deadSql('a', 'l')}
       returning a.*, l.license_key),
     freed as (
       update licenses set current_activations = licenses.current_activations - held.n, updated_at = now()
         from (select license_id, count(*) as n from gone where released_at is null group by license_id) held
        where licenses.id = held.license_id)
     select * from gone order by license_id, last_seen_at, device_id`,
    [batch],
  );
  return result.rows as CulledActivation[];
}
