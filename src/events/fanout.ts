/**
 * The webhook fan-out (D-70), owned by events: an event exists with its deliveries. Each recorded event gets one
 * pending row in `webhook_deliveries` per enabled endpoint subscribed to its type (or to `*`), written in the
 * event's transaction; that table is the webhooks worker's queue, so a delivery is sent exactly when its event
 * commits. The workers listen on DELIVERIES_DUE_CHANNEL and hear the notify when the transaction commits.
 */
import type { Db } from '../db/knex.ts';
import { insertDeliveryRows } from './repo.ts';

/** The channel on which webhook workers hear that deliveries are due. */
export const DELIVERIES_DUE_CHANNEL = 'webhook_deliveries_due';

/** Writes the deliveries of `events` (recorded in this transaction) and wakes the webhook workers at commit. */
export async function fanOut(trx: Db, events: { id: string; type: string }[]): Promise<void> {
  if (events.length === 0) return;
  await insertDeliveryRows(trx, events, DELIVERIES_DUE_CHANNEL);
}
