import { z } from 'zod';
import { timestampInput } from '../http/schemas.ts';

/** POST /api/billing/cron/lifecycle body: optional; `asOf` is refused unless LIFECYCLE_ALLOW_AS_OF=true (D-81). */
export const cronLifecycleBody = z
  .object({ asOf: timestampInput.optional() })
  .meta({ examples: [{ asOf: '2026-02-01T00:00:00Z' }] });

export const cronLifecycleQuery = z.object({
  wait: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .optional()
    .transform((v) => v === 'true'),
});

export const cronAcceptedResponse = z
  .object({ jobId: z.uuid(), status: z.enum(['queued', 'running', 'succeeded', 'failed']) })
  .meta({ examples: [{ jobId: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', status: 'queued' }] });

export const lifecycleSummaryResponse = z
  .object({
    jobId: z.uuid(),
    asOf: z.string(),
    invoicesCreated: z.number().int(),
    periodsAdvanced: z.number().int(),
    trialsEnded: z.number().int(),
    canceled: z.number().int(),
    charged: z.number().int(),
    chargeFailures: z.number().int(),
    invoicesOverdue: z.number().int(),
    licensesExpired: z.number().int(),
    dunning: z.number().int(),
    dunningStarted: z.number().int(),
    dunningResolved: z.number().int(),
    dunningFailed: z.number().int(),
    productsRefreshed: z.number().int(),
    healthScoresChanged: z.number().int(),
    remindersQueued: z.number().int(),
    errors: z.number().int(),
    failedSteps: z.array(z.string()),
    durationsMs: z.record(z.string(), z.number()),
  })
  .meta({
    examples: [
      {
        jobId: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
        asOf: '2026-02-01T00:00:00.000Z',
        invoicesCreated: 12,
        periodsAdvanced: 12,
        trialsEnded: 2,
        canceled: 1,
        charged: 9,
        chargeFailures: 1,
        invoicesOverdue: 3,
        licensesExpired: 0,
        dunning: 1,
        dunningStarted: 1,
        dunningResolved: 0,
        dunningFailed: 0,
        productsRefreshed: 4,
        healthScoresChanged: 5,
        remindersQueued: 3,
        errors: 0,
        failedSteps: [],
        durationsMs: { renewals: 412, overdue: 35, licenses: 12 },
      },
    ],
  });
