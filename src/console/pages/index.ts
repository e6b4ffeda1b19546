import type { ConsoleRoute } from '../http/route.ts';
import { auditLogRoutes } from './audit-log.tsx';
import { emailRoutes } from './emails.tsx';
import { couponRoutes } from './coupons.tsx';
import { customerRoutes } from './customers.tsx';
import { invoiceRoutes } from './invoices.tsx';
import { licenseRoutes } from './licenses.tsx';
import { lifecycleRoutes } from './lifecycle.tsx';
import { overviewRoutes } from './overview.tsx';
import { paymentRoutes } from './payments.tsx';
import { productRoutes } from './products.tsx';
import { settingsRoutes } from './settings.tsx';
import { subscriptionRoutes } from './subscriptions.tsx';
import { webhookRoutes } from './webhooks.tsx';

/** Every console page, export and action; login and logout are mounted apart (they need no session). */
export const consolePages: readonly ConsoleRoute[] = [
  ...overviewRoutes,
  ...customerRoutes,
  ...invoiceRoutes,
  ...paymentRoutes,
  ...subscriptionRoutes,
  ...licenseRoutes,
  ...productRoutes,
  ...couponRoutes,
  ...webhookRoutes,
  ...lifecycleRoutes,
  ...settingsRoutes,
  ...auditLogRoutes,
  ...emailRoutes,
];
