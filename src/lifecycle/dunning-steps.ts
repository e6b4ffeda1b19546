import type { AppDeps } from '../app-deps.ts';
import type { CustomerScope } from '../db/clock-scope.ts';
import { autoChargeDueInvoices, retryDunning } from '../dunning/charge.ts';

/** The sweep's auto-charge step (D-83): first charges of open invoices with a default provider_a method. */
export function autoChargeStep(
  deps: AppDeps,
  asOf: Date,
  scope: CustomerScope,
): Promise<{ charged: number; chargeFailures: number; dunningStarted: number }> {
  return autoChargeDueInvoices(deps, asOf, { scope });
}

/** The sweep's dunning step (D-83): retries due by `asOf`, resolving or ending cases. */
export function dunningRetryStep(
  deps: AppDeps,
  asOf: Date,
  scope: CustomerScope,
): Promise<{
  dunning: number;
  dunningResolved: number;
  dunningFailed: number;
  charged: number;
  chargeFailures: number;
}> {
  return retryDunning(deps, asOf, { scope });
}
