import type { ConsoleRoute } from '../http/route.ts';
import { auditLogRoutes } from './audit-log.tsx';
import { customerRoutes } from './customers.tsx';
import { invoiceRoutes } from './invoices.tsx';
import { overviewRoutes } from './overview.tsx';
import { paymentRoutes } from './payments.tsx';

/** Every console page, export and action; login and logout are mounted apart (they need no session). */
export const consolePages: readonly ConsoleRoute[] = [...overviewRoutes, ...customerRoutes, ...invoiceRoutes, ...paymentRoutes, ...auditLogRoutes];
