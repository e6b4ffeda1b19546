import { apiKeyRoutes } from './api-keys/routes.ts';
import { authRoutes } from './auth/routes.ts';
import { customerRoutes } from './customers/routes.ts';
import { docsRoutes } from './docs/routes.ts';
import { eventRoutes } from './events/routes.ts';
import { healthRoutes } from './health/routes.ts';
import type { AnyRoute } from './http/route.ts';
import { invoiceRoutes } from './invoices/routes.ts';
import { licenseRoutes } from './licenses/routes.ts';
import { productRoutes } from './products/routes.ts';
import { settingsRoutes } from './settings/routes.ts';
import { v1Routes } from './v1/routes.ts';

const domainRoutes: AnyRoute[] = [
  ...healthRoutes,
  ...authRoutes,
  ...apiKeyRoutes,
  ...settingsRoutes,
  ...productRoutes,
  ...customerRoutes,
  ...licenseRoutes,
  ...invoiceRoutes,
  ...eventRoutes,
  ...v1Routes,
];

/** Every route of the service: the router, the OpenAPI document and the access-control tests read this list. */
export const allRoutes: AnyRoute[] = [...domainRoutes, ...docsRoutes(domainRoutes)];
