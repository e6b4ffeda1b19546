import type { ConsoleRoute } from '../http/route.ts';
import { auditLogRoutes } from './audit-log.tsx';
import { emailRoutes } from './emails.tsx';
import { couponRoutes } from './coupons.tsx';
import { exportRoutes } from './exports.tsx';
import { customerRoutes } from './customers.tsx';
import { invoiceRoutes } from './invoices.tsx';
import { licenseRoutes } from './licenses.tsx';
import { metricRoutes } from './metrics.tsx';
import { usageExport } from './subscription-usage.tsx';
import { lifecycleRoutes } from './lifecycle.tsx';
import { overviewRoutes } from './overview.tsx';
import { paymentRoutes } from './payments.tsx';
import { productRoutes } from './products.tsx';
import { reportRoutes } from './reports.tsx';
import { searchRoutes } from './search.tsx';
import { settingsRoutes } from './settings.tsx';
import { subscriptionRoutes } from './subscriptions.tsx';
import { taxRateRoutes } from './tax-rates.tsx';
import { testClockRoutes } from './test-clocks.tsx';
import { webhookRoutes } from './webhooks.tsx';

/** Every console page, export and action; login and logout are mounted apart (they need no session). */
export const consolePages: readonly ConsoleRoute[] = [
  // First: `/admin/subscriptions/export.csv` before `/admin/subscriptions/:id`.
  ...exportRoutes,
  ...overviewRoutes,
  ...customerRoutes,
  ...invoiceRoutes,
  ...paymentRoutes,
  ...subscriptionRoutes,
  ...licenseRoutes,
  ...productRoutes,
  ...couponRoutes,
  ...taxRateRoutes,
  ...metricRoutes,
  usageExport,
  ...webhookRoutes,
  ...lifecycleRoutes,
  ...testClockRoutes,
  ...settingsRoutes,
  ...auditLogRoutes,
  ...reportRoutes,
  ...searchRoutes,
  ...emailRoutes,
];
