import { randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../db/paginate.ts';
import { keyringOf, type Keyring } from '../crypto/envelope.ts';
import { checkDestination, UnsafeDestinationError } from './destination.ts';
import { sealEndpointSecret } from './secret-at-rest.ts';
import type { Actor } from '../actor.ts';
import type { Fields } from '../audit/changes.ts';
import { recordAudits } from '../audit/service.ts';
import {
  deleteEndpointRow,
  endpointHealthRows,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  listAttemptRows,
  listDeliveryRows,
  listDeliveryRowsOfEvents,
  listEndpointRows,
  lockDelivery,
  lockEndpoint,
  notifyDeliveriesDue,
  reopenDelivery,
  rotateEndpointSecretRow,
  updateEndpointRow,
  type AttemptRow,
  type DeliveryRow,
  type DeliveryStatus,
  type EndpointRow,
} from './repo.ts';
import type { CreateEndpointInput, UpdateEndpointInput } from './schema.ts';

/** `whsec_` + 32 random bytes (base64), the Standard Webhooks secret shape. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

const badUrl = (message: string) =>
  new AppError('invalid_request', `url: ${message}`, { details: [{ path: 'url', message }] });

/** D-73 at registration: http(s) only, https in production, and no private destination unless allowed. */
export async function validateEndpointUrl(
  value: string,
  config: Pick<Config, 'NODE_ENV' | 'WEBHOOK_ALLOW_PRIVATE_URLS'>,
): Promise<string> {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badUrl('must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badUrl('must use http or https');
  if (config.NODE_ENV === 'production' && url.protocol !== 'https:') throw badUrl('must use https');
  // A user name or password in the URL would be a credential the endpoint list shows to every admin and logs carry;
  // an endpoint proves the sender by the signature (D-71), not by a password in its URL.
  if (url.username !== '' || url.password !== '') throw badUrl('must not hold a user name or password');
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

/** An endpoint as the audit log records it: what an admin changes, and when the secret was rotated, never a secret. */
function audited(row: EndpointRow): Fields {
  return {
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    rotatedAt: row.secret_rotated_at,
    previousValidUntil: row.previous_secret_expires_at,
  };
}

/** A new endpoint and its secret (given or generated), answered once: the row holds it sealed (issue 33). */
export async function createEndpoint(
  db: Db,
  input: CreateEndpointInput,
  config: Config,
  actor: Actor,
): Promise<{ endpoint: EndpointRow; secret: string }> {
  const url = await validateEndpointUrl(input.url, config);
  const secret = input.secret ?? generateSecret();
  const sealed = await sealEndpointSecret(keyringOf(config), secret);
  return inTransaction(db, async (trx) => {
    const row = await insertEndpoint(trx, { url, events: input.events, secret: sealed });
    await recordAudits(trx, actor, [
      {
        action: 'webhook_endpoint.create',
        targetType: 'webhook_endpoint',
        targetId: row.id,
        after: audited(row),
      },
    ]);
    return { endpoint: row, secret };
  });
}

export function listEndpoints(db: Db, page: PageQuery) {
  return listEndpointRows(db, page);
}

export async function getEndpoint(db: Db, id: string): Promise<EndpointRow> {
  const row = await findEndpoint(db, id);
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

/** The audit action of a PUT: turning the endpoint on or off alone is its own action; anything else an update. */
function updateAction(input: UpdateEndpointInput): string {
  const sent = Object.entries(input)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k);
  if (sent.length === 1 && sent[0] === 'enabled')
    return input.enabled ? 'webhook_endpoint.enable' : 'webhook_endpoint.disable';
  return 'webhook_endpoint.update';
}

export async function updateEndpoint(
  db: Db,
  id: string,
  input: UpdateEndpointInput,
  config: Config,
  actor: Actor,
): Promise<EndpointRow> {
  const changes: Parameters<typeof updateEndpointRow>[2] = {};
  if (input.url !== undefined) changes.url = await validateEndpointUrl(input.url, config);
  if (input.events !== undefined) changes.events = input.events;
  if (input.enabled !== undefined) changes.enabled = input.enabled;
  if (input.secret !== undefined) changes.secret = await sealEndpointSecret(keyringOf(config), input.secret);
  return inTransaction(db, async (trx) => {
    const before = await lockEndpoint(trx, id);
    if (!before) throw notFound('Webhook endpoint');
    // An accepted update is an admin action even when it changes nothing: it is recorded (with no field).
    const after = Object.keys(changes).length === 0 ? before : (await updateEndpointRow(trx, id, changes))!;
    await recordAudits(trx, actor, [
      {
        action: updateAction(input),
        targetType: 'webhook_endpoint',
        targetId: id,
        before: audited(before),
        after: audited(after),
      },
    ]);
    return after;
  });
}

/** How long a rotated-out secret keeps signing deliveries (beside the new one), so receivers can switch. */
export const SECRET_ROTATION_GRACE_SECONDS = 24 * 60 * 60;

/**
 * A new generated secret, answered once. The replaced secret keeps signing (a second `webhook-signature`)
 * for SECRET_ROTATION_GRACE_SECONDS; a secret replaced by an earlier rotation stops at once.
 */
export async function rotateEndpointSecret(
  db: Db,
  id: string,
  keyring: Keyring,
  actor: Actor,
): Promise<{ endpoint: EndpointRow; secret: string }> {
  const secret = generateSecret();
  const sealed = await sealEndpointSecret(keyring, secret);
  return inTransaction(db, async (trx) => {
    const before = await lockEndpoint(trx, id);
    if (!before) throw notFound('Webhook endpoint');
    const after = (await rotateEndpointSecretRow(trx, id, sealed, SECRET_ROTATION_GRACE_SECONDS))!;
    await recordAudits(trx, actor, [
      {
        action: 'webhook_endpoint.rotate_secret',
        targetType: 'webhook_endpoint',
        targetId: id,
        before: audited(before),
        after: audited(after),
      },
    ]);
    return { endpoint: after, secret };
  });
}

export async function deleteEndpoint(db: Db, id: string, actor: Actor): Promise<void> {
  await inTransaction(db, async (trx) => {
    const before = await lockEndpoint(trx, id);
    if (!before) throw notFound('Webhook endpoint');
    await deleteEndpointRow(trx, id);
    await recordAudits(trx, actor, [
      {
        action: 'webhook_endpoint.delete',
        targetType: 'webhook_endpoint',
        targetId: id,
        before: audited(before),
      },
    ]);
  });
}

async function withAttempts(db: Db, rows: DeliveryRow[]): Promise<(DeliveryRow & { attempts: AttemptRow[] })[]> {
  const attempts = await listAttemptRows(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((row) => ({ ...row, attempts: attempts.filter((a) => a.delivery_id === row.id) }));
}

/** An endpoint's deliveries (creation order, or newest first when asked), each with its attempts; `status` filters. */
export async function listDeliveries(db: Db, endpointId: string, page: PageQuery, status?: DeliveryStatus) {
  if (!(await findEndpoint(db, endpointId))) throw notFound('Webhook endpoint');
  const found = await listDeliveryRows(db, endpointId, page, status);
  return { rows: await withAttempts(db, found.rows), hasMore: found.hasMore };
}

const auditedDelivery = (row: DeliveryRow): Fields => ({ status: row.status, nextAttemptAt: row.next_attempt_at });

/**
 * Redelivers now, whatever the delivery's state (D-72): back to pending and due now (a scheduled retry
 * becomes this one), and the webhook workers are notified on commit. `endpointId`, when given (the API's
 * path), must be the delivery's endpoint.
 */
export async function retryDelivery(db: Db, deliveryId: string, actor: Actor, endpointId?: string) {
  return inTransaction(db, async (trx) => {
    const before = await lockDelivery(trx, deliveryId);
    if (!before || (endpointId !== undefined && before.endpoint_id !== endpointId)) throw notFound('Webhook delivery');
    await reopenDelivery(trx, deliveryId);
    await notifyDeliveriesDue(trx);
    const [row] = await withAttempts(trx, [(await findDelivery(trx, deliveryId))!]);
    await recordAudits(trx, actor, [
      {
        action: 'webhook_delivery.redeliver',
        targetType: 'webhook_delivery',
        targetId: deliveryId,
        before: auditedDelivery(before),
        after: auditedDelivery(row!),
      },
    ]);
    return row!;
  });
}

/** The window an endpoint's health looks back over. */
export const HEALTH_WINDOW_SECONDS = 24 * 60 * 60;

export interface EndpointHealth {
  delivered: number;
  failed: number;
  pending: number;
  /** Delivered out of the finished (delivered + failed) deliveries, in percent; null when none finished. */
  successRate: number | null;
  lastFailure: { at: Date; statusCode: number | null; error: string | null } | null;
}

const NO_DELIVERIES: EndpointHealth = { delivered: 0, failed: 0, pending: 0, successRate: null, lastFailure: null };

/** Each endpoint's deliveries of the last 24 hours (HEALTH_WINDOW_SECONDS), from the database in one statement. */
export async function endpointHealth(db: Db, endpointIds: string[]): Promise<Map<string, EndpointHealth>> {
  const rows = await endpointHealthRows(db, endpointIds, HEALTH_WINDOW_SECONDS);
  const health = new Map(endpointIds.map((id) => [id, NO_DELIVERIES]));
  for (const r of rows) {
    const finished = r.delivered + r.failed;
    health.set(r.endpoint_id, {
      delivered: r.delivered,
      failed: r.failed,
      pending: r.pending,
      successRate: finished === 0 ? null : Math.round((r.delivered / finished) * 1000) / 10,
      lastFailure: r.last_failure_at
        ? { at: r.last_failure_at, statusCode: r.last_failure_status, error: r.last_failure_error }
        : null,
    });
  }
  return health;
}

/**
 * The outbound deliveries of these events (an invoice's page), newest first, each with its status and attempt count.
 */
export function listDeliveriesOfEvents(db: Db, eventIds: string[]) {
  return listDeliveryRowsOfEvents(db, eventIds);
}
