/**
 * The webhook fan-out (D-70), owned by events: an event exists with its deliveries. Each recorded event gets one
 * pending row in `webhook_deliveries` per enabled endpoint subscribed to its type (or to `*`), written with the
 * event (repo.ts insertEventsWithDeliveries), in its transaction; that table is the webhooks worker's queue, so a
 * delivery is sent exactly when its event commits. The workers listen on DELIVERIES_DUE_CHANNEL and hear the
 * notify when the transaction commits.
 */

/** The channel on which webhook workers hear that deliveries are due. */
export const DELIVERIES_DUE_CHANNEL = 'webhook_deliveries_due';
