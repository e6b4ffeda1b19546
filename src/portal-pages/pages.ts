import { billingAction, billingPage } from './billing.tsx';
import { changePlanAction, changePlanPreviewPage } from './plan-change.tsx';
import { invoicesPage } from './invoices.tsx';
import { deactivateAction, licenseFileAction, licensePage, licensesPage } from './licenses.tsx';
import { overviewPage } from './overview.tsx';
import type { PortalAction, PortalPage } from './route.ts';
import { cancelAction, keepAction, subscriptionPage, subscriptionsPage } from './subscriptions.tsx';

/** Every portal page and form post (P-3..P-6). */
export const portalRoutes: (PortalPage | PortalAction)[] = [
  overviewPage,
  invoicesPage,
  subscriptionsPage,
  changePlanPreviewPage,
  subscriptionPage,
  cancelAction,
  keepAction,
  changePlanAction,
  licensesPage,
  licensePage,
  deactivateAction,
  licenseFileAction,
  billingPage,
  billingAction,
];
