import { z } from 'zod';
import type { AppDeps } from '../app-deps.ts';
import type { Db } from '../db/knex.ts';
import { serialiseEvent } from '../events/schema.ts';
import { enqueue } from '../queue/enqueue.ts';
import { defineJob } from '../queue/job.ts';
import { advanceDelivery, findDeliveryTarget, insertAttempt, recordDeliveredAttempt } from './repo.ts';
import { nextAttemptDelayMs, parseRetryAfter, retrySchedule } from './retry-schedule.ts';
import { postWebhook, type SendOutcome } from './send.ts';
import { signatureHeaders } from './sign.ts';

const payload = z.object({
  deliveryId: z.uuid(),
  /** Attempts already made when this job was enqueued; a job whose count is stale does nothing. */
  attempt: z.number().int().min(0),
});

/**
 * One attempt of one delivery (D-72). HTTP failures are not thrown: they are logged as attempts and the next
 * attempt is a new job scheduled in the same transaction, so the schedule is exact and visible. pg-boss's own
 * retry only covers a crash: a worker killed mid-send leaves the job active until it expires (20 s, well past the
 * 5 s send), then it runs again.
 */
export const deliverWebhookJob = defineJob({
  name: 'webhooks.deliver',
  group: 'webhooks',
  payload,
  queue: { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 20, notify: true },
  // A slot fetches 4 deliveries at once and sends them side by side (one fetch and one completion per 4); a
  // send is bounded by the 5 s timeout, so a slow receiver holds at most one slot of 8 for that long.
  concurrency: 8,
  batchSize: 4,
  run: (deps, job) => deliverAttempt(deps, job),
});

export type DeliverPayload = z.output<typeof payload>;

export async function deliverAttempt(deps: AppDeps, job: DeliverPayload): Promise<{ outcome: string }> {
  const target = await findDeliveryTarget(deps.db, job.deliveryId);
  if (!target) return { outcome: 'gone' };
  if (target.status !== 'pending' || target.attempt_count !== job.attempt) return { outcome: 'stale' };
  if (!target.enabled) return { outcome: 'endpoint_disabled' };

  // The body is serialised once per attempt and signed as those exact bytes.
  const body = JSON.stringify(serialiseEvent({ id: target.event_id, type: target.event_type, data: target.event_data, created_at: target.event_created_at }));
  const headers = signatureHeaders(target.secret, { id: target.event_id, type: target.event_type }, body, Math.floor(Date.now() / 1000));
  const sent = await postWebhook(target.url, body, headers, { allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE_URLS });
  const outcome = sent.ok ? await recordSuccess(deps.db, job, sent) : await deps.db.transaction((trx) => recordAttempt(trx, deps, job, sent));
  deps.logger.info({ deliveryId: job.deliveryId, eventId: target.event_id, attempt: job.attempt + 1, statusCode: sent.statusCode, error: sent.error, outcome }, 'webhook attempt');
  return { outcome };
}

async function recordSuccess(db: Db, job: DeliverPayload, sent: SendOutcome): Promise<string> {
  await recordDeliveredAttempt(db, { delivery_id: job.deliveryId, attempt: job.attempt + 1, status_code: sent.statusCode, latency_ms: sent.latencyMs, error: sent.error, response_body: sent.responseBody });
  return 'delivered';
}

async function recordAttempt(trx: Db, deps: AppDeps, job: DeliverPayload, sent: SendOutcome): Promise<string> {
  const attemptsMade = job.attempt + 1;
  await insertAttempt(trx, {
    delivery_id: job.deliveryId,
    attempt: attemptsMade,
    status_code: sent.statusCode,
    latency_ms: sent.latencyMs,
    error: sent.error,
    response_body: sent.responseBody,
  });
  if (sent.ok) {
    await advanceDelivery(trx, job.deliveryId, job.attempt, { status: 'delivered', nextAttemptAt: null });
    return 'delivered';
  }
  const delayMs = nextAttemptDelayMs(retrySchedule(deps.config), attemptsMade, parseRetryAfter(sent.retryAfter));
  if (delayMs === null) {
    await advanceDelivery(trx, job.deliveryId, job.attempt, { status: 'failed', nextAttemptAt: null });
    return 'failed';
  }
  const nextAttemptAt = new Date(Date.now() + delayMs);
  if (await advanceDelivery(trx, job.deliveryId, job.attempt, { status: 'pending', nextAttemptAt })) {
    await enqueue(trx, deliverWebhookJob, { deliveryId: job.deliveryId, attempt: attemptsMade }, { startAfter: nextAttemptAt });
  }
  return 'retry_scheduled';
}
