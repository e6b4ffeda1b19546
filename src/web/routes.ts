import { apiKeyRoutes } from '../api-keys/routes.ts';
import { auditRoutes } from '../audit/routes.ts';
import { creditNoteRoutes } from '../credit-notes/routes.ts';
import { creditRoutes } from '../credits/routes.ts';
import { authRoutes } from '../auth/routes.ts';
import { docsRoutes } from '../docs/routes.ts';
import { eventRoutes } from '../events/routes.ts';
import { healthRoutes } from '../health/routes.ts';
import type { AnyRoute } from '../http/route.ts';
import { couponRoutes } from '../coupons/routes.ts';
import { invoiceRoutes } from '../invoices/routes.ts';
import { invoicePdfRoutes } from '../invoices/pdf/routes.ts';
import { emailRoutes } from '../emails/routes.ts';
import { hostedInvoiceRoutes } from '../hosted-invoices/routes.ts';
import { licenseFileRoutes } from '../licenses/file-routes.ts';
import { licenseRoutes } from '../licenses/routes.ts';
import { lifecycleRoutes } from '../lifecycle/routes.ts';
import { metricsRoutes } from '../metrics/routes.ts';
import { reportRoutes } from '../reports/routes.ts';
import { metricRoutes } from '../metering/routes.ts';
import { usageRoutes } from '../usage-api/routes.ts';
import { portalRoutes } from '../portal/routes.ts';
import { paymentMethodRoutes } from '../payment-methods/routes.ts';
import { paymentRoutes } from '../payments/routes.ts';
import { planRoutes } from '../plans/routes.ts';
import { checkoutRoutes } from '../checkout/routes.ts';
import { providerEventRoutes } from '../provider-events/routes.ts';
import { productRoutes } from '../products/routes.ts';
import { customerRoutes } from '../reporting/customer-routes.ts';
import { refundRoutes } from '../refunds/routes.ts';
import { settingsRoutes } from '../settings/routes.ts';
import { settlementRoutes } from '../settlement/routes.ts';
import { subscriptionRoutes } from '../subscriptions/routes.ts';
import { taxRateRoutes } from '../tax-rates/routes.ts';
import { testClockRoutes } from '../test-clocks/routes.ts';
import { v1Routes } from '../v1/routes.ts';
import { webhookRoutes } from '../webhooks/routes.ts';

const domainRoutes: AnyRoute[] = [
  ...healthRoutes,
  ...authRoutes,
  ...apiKeyRoutes,
  ...settingsRoutes,
  ...productRoutes,
  ...customerRoutes,
  ...licenseFileRoutes,
  ...licenseRoutes,
  ...invoiceRoutes,
  ...planRoutes,
  ...metricRoutes,
  ...couponRoutes,
  ...taxRateRoutes,
  ...testClockRoutes,
  ...subscriptionRoutes,
  ...invoicePdfRoutes,
  ...hostedInvoiceRoutes,
  ...emailRoutes,
  ...settlementRoutes,
  ...paymentRoutes,
  ...refundRoutes,
  ...creditRoutes,
  ...creditNoteRoutes,
  ...paymentMethodRoutes,
  ...eventRoutes,
  ...webhookRoutes,
  ...v1Routes,
  ...usageRoutes,
  ...lifecycleRoutes,
  ...providerEventRoutes,
  ...checkoutRoutes,
  ...metricsRoutes,
  ...reportRoutes,
  ...auditRoutes,
  ...portalRoutes,
];

/** Every route of the service: the router, the OpenAPI document and the access-control tests read this list. */
export const allRoutes: AnyRoute[] = [...domainRoutes, ...docsRoutes(domainRoutes)];
