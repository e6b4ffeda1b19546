import { randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../http/schemas.ts';
import { checkDestination, UnsafeDestinationError } from './destination.ts';
import {
  deleteEndpointRow, findDelivery, findEndpoint, insertEndpoint, listAttemptRows, listDeliveryRows, listEndpointRows, notifyDeliveriesDue, reopenDelivery,
  updateEndpointRow, type AttemptRow, type DeliveryRow, type EndpointRow,
} from './repo.ts';
import { listDeliveryRowsOfEvents } from './repo.ts';
import type { CreateEndpointInput, UpdateEndpointInput } from './schema.ts';

/** `whsec_` + 32 random bytes (base64), the Standard Webhooks secret shape. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

const badUrl = (message: string) => new AppError('invalid_request', `url: ${message}`, { details: [{ path: 'url', message }] });

/** D-73 at registration: http(s) only, https in production, and no private destination unless allowed. */
export async function validateEndpointUrl(value: string, config: Pick<Config, 'NODE_ENV' | 'WEBHOOK_ALLOW_PRIVATE_URLS'>): Promise<string> {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badUrl('must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badUrl('must use http or https');
  if (config.NODE_ENV === 'production' && url.protocol !== 'https:') throw badUrl('must use https');
  if (!config.WEBHOOK_ALLOW_PRIVATE_URLS) {
    try {
      await checkDestination(url);
    } catch (error) {
      if (error instanceof UnsafeDestinationError) throw badUrl(error.message);
      throw error;
    }
  }
  return url.toString();
}

export async function createEndpoint(db: Db, input: CreateEndpointInput, config: Config): Promise<EndpointRow> {
  const url = await validateEndpointUrl(input.url, config);
  return insertEndpoint(db, { url, events: input.events, secret: input.secret ?? generateSecret() });
}

export function listEndpoints(db: Db, page: PageQuery) {
  return listEndpointRows(db, page);
}

export async function updateEndpoint(db: Db, id: string, input: UpdateEndpointInput, config: Config): Promise<EndpointRow> {
  const changes: Parameters<typeof updateEndpointRow>[2] = {};
  if (input.url !== undefined) changes.url = await validateEndpointUrl(input.url, config);
  if (input.events !== undefined) changes.events = input.events;
  if (input.enabled !== undefined) changes.enabled = input.enabled;
  if (input.secret !== undefined) changes.secret = input.secret;
  const row = Object.keys(changes).length ? await updateEndpointRow(db, id, changes) : await findEndpoint(db, id);
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

export async function deleteEndpoint(db: Db, id: string): Promise<void> {
  if ((await deleteEndpointRow(db, id)) === 0) throw notFound('Webhook endpoint');
}

async function withAttempts(db: Db, rows: DeliveryRow[]): Promise<(DeliveryRow & { attempts: AttemptRow[] })[]> {
  const attempts = await listAttemptRows(db, rows.map((r) => r.id));
  return rows.map((row) => ({ ...row, attempts: attempts.filter((a) => a.delivery_id === row.id) }));
}

/** An endpoint's deliveries in creation order, each with its attempts. */
export async function listDeliveries(db: Db, endpointId: string, page: PageQuery) {
  if (!(await findEndpoint(db, endpointId))) throw notFound('Webhook endpoint');
  const found = await listDeliveryRows(db, endpointId, page);
  return { rows: await withAttempts(db, found.rows), hasMore: found.hasMore };
}

/**
 * Redelivers now, whatever the delivery's state (D-72): back to pending and due now (a scheduled retry
 * becomes this one), and the webhook workers are notified on commit.
 */
export async function retryDelivery(db: Db, endpointId: string, deliveryId: string) {
  return inTransaction(db, async (trx) => {
    const attempts = await reopenDelivery(trx, deliveryId, endpointId);
    if (attempts === undefined) throw notFound('Webhook delivery');
    await notifyDeliveriesDue(trx);
    const [row] = await withAttempts(trx, [(await findDelivery(trx, deliveryId))!]);
    return row!;
  });
}

/** The outbound deliveries of these events (an invoice's page), newest first, each with its status and attempt count. */
export function listDeliveriesOfEvents(db: Db, eventIds: string[]) {
  return listDeliveryRowsOfEvents(db, eventIds);
}
