/** Floating seats (D-102): the sweep that removes dead devices. Their seats are freed by validate itself (repo.ts). */
import { inTransaction, type Db } from '../db/knex.ts';
import { recordEvents } from '../events/service.ts';
import { cullDeadActivationRows } from './seats-repo.ts';

/**
 * Deletes dead activations and records one license.device_culled for each, in bounded batches that each
 * commit their deletes with their events: two sweeps at once delete (and tell) each device once. Stops at
 * a batch that culls nothing (what is left is held by another sweep or a validate, and is taken next time).
 */
export async function cullDeadDevices(db: Db, licensesPerBatch = 200): Promise<number> {
  let total = 0;
  for (;;) {
    const culled = await inTransaction(db, async (trx) => {
      const rows = await cullDeadActivationRows(trx, licensesPerBatch);
      if (rows.length > 0) {
        await recordEvents(
          trx,
          rows.map((row) => ({
            type: 'license.device_culled' as const,
            data: {
              licenseId: row.license_id,
              licenseKey: row.license_key,
              deviceId: row.device_id,
              lastSeenAt: row.last_seen_at.toISOString(),
            },
          })),
        );
      }
      return rows.length;
    });
    total += culled;
    if (culled === 0) return total;
  }
}
