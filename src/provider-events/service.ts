/**
 * Inbound provider webhooks (D-62): verified on the raw bytes, stored once per (provider, event id) and
 * queued in one transaction, acknowledged at once; the provider_events worker applies each stored event
 * idempotently under its row lock (applyProviderEvent).
 */
import { newUuid } from '../crypto/ids.ts';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { recordPaymentFailure } from '../dunning/service.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../db/paginate.ts';
import { enqueue } from '../queue/enqueue.ts';
import { receiveProviderPayment } from '../settlement/service.ts';
import { lockSubscription } from '../subscriptions/service.ts';
import { transitionSubscription } from '../subscriptions/transitions.ts';
import { applyProviderEventJob } from './apply-event.job.ts';
import { effectOf, type ProviderEffect } from './effect.ts';
import { MalformedEventError, readEnvelope } from './parse.ts';
import {
  findProviderEventRow,
  insertProviderEventRow,
  listProviderEventRows,
  lockProviderEventRow,
  newerStatusEventApplied,
  updateProviderEventRow,
  type ProviderEventRow,
} from './repo.ts';
import { assertProviderConfigured, secretList } from '../providers/configured.ts';
import { verifyProviderA, verifyProviderB, verifyProviderC, type Provider } from './verify.ts';

export type ProviderSecrets = Pick<
  Config,
  'PROVIDER_A_WEBHOOK_SECRET' | 'PROVIDER_B_CALLBACK_TOKEN' | 'PROVIDER_C_WEBHOOK_SECRET'
>;

function verify(
  provider: Provider,
  raw: Buffer,
  header: (name: string) => string,
  config: ProviderSecrets,
  now: Date,
): void {
  // No secret is a set-up state: 503 (the provider retries later) rather than a signature that cannot match.
  assertProviderConfigured(config, provider, 'webhook');
  if (provider === 'provider_a')
    verifyProviderA(raw, header('provider_a-signature'), secretList(config.PROVIDER_A_WEBHOOK_SECRET), now);
  else if (provider === 'provider_b')
    verifyProviderB(header('x-callback-token'), secretList(config.PROVIDER_B_CALLBACK_TOKEN));
  else verifyProviderC(raw, header('x-signature'), secretList(config.PROVIDER_C_WEBHOOK_SECRET));
}

/** Verifies, stores and queues one webhook; a duplicate is acknowledged without a second row or job. */
export async function receiveProviderWebhook(
  db: Db,
  provider: Provider,
  raw: Buffer,
  header: (name: string) => string,
  config: ProviderSecrets,
  now = new Date(),
): Promise<{ duplicate: boolean }> {
  verify(provider, raw, header, config, now);
  let parsed: ReturnType<typeof readEnvelope>;
  try {
    parsed = readEnvelope(provider, raw);
  } catch (error) {
    if (error instanceof MalformedEventError)
      throw new AppError('invalid_request', `The ${provider} event cannot be read: ${error.message}`);
    throw error;
  }
  const { envelope, body } = parsed;
  const stored = await storeProviderEvent(db, {
    id: newUuid(),
    provider,
    event_id: envelope.eventId,
    event_type: envelope.eventType,
    payload: body,
    occurred_at: envelope.occurredAt,
    subject_id: envelope.subjectId,
  });
  return { duplicate: !stored };
}

/**
 * Stores a received event and queues its application, in one transaction: a stored event always has its job. A
 * duplicate (provider, event id) is neither stored nor queued again; answers whether this one was stored.
 */
export async function storeProviderEvent(db: Db, row: Parameters<typeof insertProviderEventRow>[1]): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const id = await insertProviderEventRow(trx, row);
    if (id) await enqueue(trx, applyProviderEventJob, { eventId: id });
    return id !== undefined;
  });
}

/** An effect that can never succeed as stored: the event is kept as failed with this reason. */
class PermanentFailure extends Error {}

/**
 * Refusals that say the event itself is wrong, not that the moment is: no retry can change them. An amount
 * the service refuses (`invalid_amount`, D-91) is one; parse.ts refuses impossible amounts first, this is the
 * backstop for any other path that validates one.
 */
const PERMANENT_CODES = new Set([
  'invoice_not_found',
  'currency_mismatch',
  'invalid_request',
  'invalid_amount',
  'invoice_not_payable',
  'amount_exceeds_due',
]);

/**
 * The id an event names for one of our rows; one that cannot be an id names nothing (not a database error to retry).
 */
function namedId(id: string | undefined, what: 'invoice' | 'subscription'): string {
  if (!id) throw new PermanentFailure(`the event names no ${what}`);
  if (!z.guid().safeParse(id).success) throw new PermanentFailure(`${what} ${id} does not exist`);
  return id;
}

/** A row the event names (a subscription on a failed payment) that is not ours: no retry will make it exist. */
const isForeignKeyViolation = (error: unknown) => (error as { code?: unknown } | null)?.code === '23503';

async function applyEffect(
  trx: Db,
  event: ProviderEventRow,
  effect: ProviderEffect,
  now: Date,
  logger?: Logger,
): Promise<'processed' | 'ignored'> {
  switch (effect.kind) {
    case 'none':
      return 'ignored';
    case 'not_paid':
      // Read and understood, and nothing to record: a delayed payment's success or failure comes as its own event.
      logger?.info(
        { providerEvent: event.id, provider: event.provider, eventType: event.event_type, invoiceId: effect.invoiceId },
        `provider event records no payment: ${effect.reason}`,
      );
      return 'processed';
    case 'payment': {
      const invoiceId = namedId(effect.invoiceId, 'invoice');
      const result = await receiveProviderPayment(trx, {
        paymentMethod: event.provider,
        reference: effect.reference,
        invoiceId,
        amount: effect.amount,
        currency: effect.currency,
        now,
      });
      if (result.outcome !== 'already_recorded' && result.credited) {
        // Money the invoice could not take: kept as store credit, and said so where operators look.
        logger?.warn(
          {
            providerEvent: event.id,
            provider: event.provider,
            reference: effect.reference,
            invoiceId,
            credited: result.credited,
            currency: effect.currency,
          },
          'provider payment beyond what was due became store credit',
        );
      }
      return 'processed';
    }
    case 'payment_failed': {
      const invoiceId = namedId(effect.invoiceId, 'invoice');
      await recordPaymentFailure(trx, {
        invoiceId,
        subscriptionId: effect.subscriptionId ? namedId(effect.subscriptionId, 'subscription') : null,
        paymentMethod: event.provider,
        failureReason: effect.reason,
        now,
      });
      return 'processed';
    }
    case 'subscription_status': {
      const subscriptionId = namedId(effect.subscriptionId, 'subscription');
      // The subscription's lock first, then the ordering check: two status events applied at once queue on the
      // lock, and the later one sees what the earlier committed (a check before the lock would miss it).
      const sub = await lockSubscription(trx, subscriptionId);
      if (!sub) throw new PermanentFailure(`subscription ${subscriptionId} does not exist`);
      if (await newerStatusEventApplied(trx, event)) return 'ignored';
      // Canceled is final (interface.md): a late "active" never revives it.
      if (sub.status === effect.status || sub.status === 'canceled') return 'processed';
      await transitionSubscription(trx, sub, effect.status, now);
      return 'processed';
    }
  }
}

/**
 * Applies one stored event: under its row lock, once. Effects and the new status commit together, so a
 * crash re-runs it cleanly. A permanent problem (unknown invoice, unreadable payload) keeps the event as
 * `failed` with the reason, for the list and replay; anything else throws so the queue retries.
 */
export async function applyProviderEvent(
  db: Db,
  id: string,
  now = new Date(),
  logger?: Logger,
): Promise<ProviderEventRow | undefined> {
  return inTransaction(db, async (trx) => {
    const event = await lockProviderEventRow(trx, id);
    if (!event || event.status === 'processed' || event.status === 'ignored') return event;
    const attempts = event.attempts + 1;
    try {
      const status = await trx.transaction(async (sp) =>
        applyEffect(sp, event, effectOf(event.provider, event.payload), now, logger),
      );
      return updateProviderEventRow(trx, id, { status, failure_reason: null, attempts, processed_at: now });
    } catch (error) {
      const permanent =
        error instanceof PermanentFailure ||
        error instanceof MalformedEventError ||
        (error instanceof AppError && PERMANENT_CODES.has(error.code)) ||
        isForeignKeyViolation(error);
      if (!permanent) throw error;
      const reason = isForeignKeyViolation(error)
        ? `the event names a row that does not exist ` +
          `(${(error as { constraint?: string }).constraint ?? 'foreign key'})`
        : (error as Error).message;
      return updateProviderEventRow(trx, id, {
        status: 'failed',
        failure_reason: reason,
        attempts,
        processed_at: null,
      });
    }
  });
}

/**
 * The queue's last retry of a transient error failed too: the event is kept as `failed` with that reason,
 * so it is listed and can be replayed, instead of waiting as `received` with no job left to apply it.
 * An event applied meanwhile is left as it is.
 */
export async function giveUpProviderEvent(db: Db, id: string, reason: string): Promise<ProviderEventRow | undefined> {
  return inTransaction(db, async (trx) => {
    const event = await lockProviderEventRow(trx, id);
    if (event?.status !== 'received') return event;
    return updateProviderEventRow(trx, id, {
      status: 'failed',
      failure_reason: `gave up after ${event.attempts + 1} attempts: ${reason}`,
      attempts: event.attempts + 1,
      processed_at: null,
    });
  });
}

export function listProviderEvents(db: Db, page: PageQuery, filters: { provider?: string; status?: string }) {
  return listProviderEventRows(db, page, filters);
}

export async function getProviderEvent(db: Db, id: string): Promise<ProviderEventRow> {
  const row = await findProviderEventRow(db, id);
  if (!row) throw notFound('Provider event');
  return row;
}

/**
 * Queues a stored event again (a failed one after fixing its cause) and records who did it (C-11); an applied
 * one stays applied, and the replay, which changed nothing, is still recorded (one row per accepted admin
 * write). Replayed twice before the worker gets to it, the event is queued twice and applied once (under its row lock).
 */
export async function replayProviderEvent(db: Db, id: string, actor: Actor): Promise<ProviderEventRow> {
  return inTransaction(db, async (trx) => {
    const event = await lockProviderEventRow(trx, id);
    if (!event) throw notFound('Provider event');
    const applied = event.status === 'processed' || event.status === 'ignored';
    const reset = applied ? event : await updateProviderEventRow(trx, id, { status: 'received', failure_reason: null });
    if (!applied) await enqueue(trx, applyProviderEventJob, { eventId: id });
    const audited = (row: ProviderEventRow) => ({ status: row.status, failureReason: row.failure_reason });
    await recordAudits(trx, actor, [
      {
        action: 'provider_event.replay',
        targetType: 'provider_event',
        targetId: id,
        before: audited(event),
        after: audited(reset),
      },
    ]);
    return reset;
  });
}
