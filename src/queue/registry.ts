import { purgeExpiredJob } from '../housekeeping/purge-expired.job.ts';
import { renderInvoicePdfJob } from '../invoices/pdf/render-pdf.job.ts';
import { lifecycleSweepJob } from '../lifecycle/sweep.job.ts';
import { applyProviderEventJob } from '../provider-events/apply-event.job.ts';
import { refreshProductMetricsJob } from '../products/refresh-metrics.job.ts';
import { deliverWebhookJob } from '../webhooks/deliver.job.ts';
import type { JobDef } from './job.ts';

/** Every job the service runs; workers register handlers from here and the release step creates the queues. */
export const jobRegistry: JobDef[] = [purgeExpiredJob, renderInvoicePdfJob, refreshProductMetricsJob, deliverWebhookJob, lifecycleSweepJob, applyProviderEventJob];
