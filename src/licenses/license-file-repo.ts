import type { Db } from '../db/knex.ts';
import { queryPrepared, type PreparedStatement } from '../db/prepared.ts';
import type { LicenseRow } from './repo.ts';
import { deadSql } from './dead-device-sql.ts';
import type { KeyEncryption } from './signing-key-crypto.ts';

/** The license's fields a file carries, and what the checkout decides with. */
export interface CheckoutRow
  extends Pick<
    LicenseRow,
    | 'id'
    | 'license_key'
    | 'customer_id'
    | 'product_id'
    | 'status'
    | 'max_activations'
    | 'features'
    | 'expires_at'
    | 'test_clock_id'
  > {
  /** Whether the device asked for is activated on the license and live (D-102; false when none was asked for). */
  activated: boolean;
  /** The current signing key and how its private key is stored, null before the first exists. */
  kid: string | null;
  key_encryption: KeyEncryption | null;
  now: Date;
}

// Prepared: as a knex query the checkout missed its aim (figures in db/prepared.ts).
const CHECKOUT: PreparedStatement = {
  name: 'licenses.checkout',
  text: `with l as (
       select id, license_key, customer_id, product_id, status, max_activations, features, expires_at,
              heartbeat_interval_seconds, test_clock_id
         from licenses where license_key = $1)
     select l.id, l.license_key, l.customer_id, l.product_id, l.status, l.max_activations, l.features, l.expires_at,
            l.test_clock_id,
            exists (select 1 from license_activations a
                     where a.license_id = l.id and a.device_id = $2::text
                       and not ${deadSql('a', 'l')}) as activated,
            k.kid, k.private_key_encryption as key_encryption,
            now() as now
       from l
       left join license_signing_keys k on k.rotated_at is null`,
};

/**
 * A checkout's read (D-101): the license, whether the device is activated on it and live (a dead device, D-102,
 * must validate again before it gets a file), and the current signing key's kid, read together so a rotation by
 * another process is seen at once.
 */
export async function findCheckoutRow(db: Db, key: string, deviceId: string | null): Promise<CheckoutRow | undefined> {
  const [row] = await queryPrepared<CheckoutRow>(db, CHECKOUT, [key, deviceId]);
  return row;
}
