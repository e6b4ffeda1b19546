import { z } from 'zod';
import { timestampInput } from '../http/schemas.ts';

/** POST /api/billing/cron/lifecycle body: optional; `asOf` counts only outside production (D-81). */
export const cronLifecycleBody = z.object({ asOf: timestampInput.optional() });

export const cronLifecycleQuery = z.object({
  wait: z.enum(['true', 'false'], { error: 'must be true or false' }).optional().transform((v) => v === 'true'),
});

export const cronAcceptedResponse = z.object({ jobId: z.uuid(), status: z.enum(['queued', 'running', 'succeeded', 'failed']) });

export const lifecycleSummaryResponse = z.object({
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
  errors: z.number().int(),
  failedSteps: z.array(z.string()),
  durationsMs: z.record(z.string(), z.number()),
});
