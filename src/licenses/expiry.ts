/** The sweep's license step (D-32): licenses whose date passed are stored `expired`, told once each. */
import { SYSTEM_ACTOR } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { REAL_CUSTOMERS, type CustomerScope } from '../db/clock-scope.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import { recordEvents } from '../events/service.ts';
import { expireDueLicenseRows } from './repo.ts';
import { licenseEventData, TARGET_TYPE } from './service.ts';

/**
 * Stores `expired` on licenses whose date passed by `asOf` and records license.expired once for
 * each (D-32), in bounded batches that each commit with their events and their audit rows (actor
 * `system`, C-11).
 */
export async function expireLicenses(
  db: Db,
  asOf: Date,
  batchSize = 500,
  scope: CustomerScope = REAL_CUSTOMERS,
): Promise<number> {
  let total = 0;
  for (;;) {
    const expired = await inTransaction(db, async (trx) => {
      const rows = await expireDueLicenseRows(trx, asOf, batchSize, scope);
      await recordEvents(
        trx,
        rows.map((row) => ({ type: 'license.expired' as const, data: licenseEventData(row, asOf) })),
      );
      // Only the sweep expires licenses: recorded as `system` (C-11), set-wise.
      await recordAudits(
        trx,
        SYSTEM_ACTOR,
        rows.map((row) => ({
          action: 'license.expire',
          targetType: TARGET_TYPE,
          targetId: row.license_key,
          before: { status: 'active' },
          after: { status: row.status },
        })),
      );
      return rows.length;
    });
    total += expired;
    if (expired < batchSize) return total;
  }
}
