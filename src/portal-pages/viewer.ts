import type { Company } from '../settings/company.ts';
import type { PortalFeature } from '../settings/definitions.ts';
import type { CustomerActor } from '../portal/actions.ts';

/** The signed-in customer a portal page is rendered for. */
export interface PortalViewer {
  customerId: string;
  customerName: string;
  company: Company;
  /** The session's form token (every portal POST carries it). */
  csrf: string;
  returnUrl: string | null;
  features: Set<PortalFeature>;
  /** The customer as the audit log names them (K-2), with the request's id and IP. */
  actor: CustomerActor;
}
