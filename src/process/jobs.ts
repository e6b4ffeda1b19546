import { dispatchEmailsHandler } from '../mailer/dispatch.handler.ts';
import { purgeExpiredHandler } from '../housekeeping/purge-expired.handler.ts';
import { renderInvoicePdfHandler } from '../invoices/pdf/render-pdf.handler.ts';
import { cullDeadDevicesHandler } from '../licenses/cull-devices.handler.ts';
import { lifecycleSweepHandler } from '../lifecycle/sweep.handler.ts';
import { applyProviderEventHandler } from '../provider-events/apply-event.handler.ts';
import { refreshProductMetricsHandler } from '../products/refresh-metrics.handler.ts';
import { resumePendingRefundsHandler } from '../refunds/resume-pending.handler.ts';
import type { JobDefinition, JobHandler } from '../queue/job.ts';
import { advanceTestClockHandler } from '../test-clocks/advance.handler.ts';
import { deliverWebhookHandler } from '../webhooks/deliver.handler.ts';
import { sendPortalCodeHandler } from '../portal/send-code.handler.ts';

/**
 * Every job the service runs, with its handler: the bootstraps hand it to registerWorkers, and its
 * definitions to createQueues. Kept here, above the domains, so the queue code imports none of them.
 */
export const jobHandlers: readonly JobHandler[] = [
  purgeExpiredHandler,
  renderInvoicePdfHandler,
  refreshProductMetricsHandler,
  deliverWebhookHandler,
  lifecycleSweepHandler,
  applyProviderEventHandler,
  cullDeadDevicesHandler,
  resumePendingRefundsHandler,
  dispatchEmailsHandler,
  sendPortalCodeHandler,
  advanceTestClockHandler,
];

export const jobDefinitions: readonly JobDefinition[] = jobHandlers.map((handler) => handler.definition);
