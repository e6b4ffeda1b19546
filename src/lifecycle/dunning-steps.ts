import type { AppDeps } from '../app-deps.ts';

/**
 * The sweep's auto-charge and dunning steps (D-83). Their internals live in src/dunning/service.ts:
 *   autoChargeDueInvoices(deps, asOf): Promise<{ charged, chargeFailures, dunningStarted }>
 *   retryDunning(deps, asOf): Promise<{ dunning, dunningResolved, dunningFailed, charged, chargeFailures }>
 *
 * TODO(issue 8): src/dunning/service.ts does not exist yet in this tree. When it lands, replace the two
 * bodies below with calls to autoChargeDueInvoices and retryDunning (their counts already have their
 * places in the summary). Until then both steps count nothing and charge nothing.
 */
export async function autoChargeStep(deps: AppDeps, asOf: Date): Promise<{ charged: number; chargeFailures: number; dunningStarted: number }> {
  deps.logger.warn({ asOf: asOf.toISOString() }, 'lifecycle: auto-charge step not wired yet (src/dunning/service.ts missing)');
  return { charged: 0, chargeFailures: 0, dunningStarted: 0 };
}

export async function dunningRetryStep(deps: AppDeps, asOf: Date): Promise<{ dunning: number; dunningResolved: number; dunningFailed: number; charged: number; chargeFailures: number }> {
  deps.logger.warn({ asOf: asOf.toISOString() }, 'lifecycle: dunning retry step not wired yet (src/dunning/service.ts missing)');
  return { dunning: 0, dunningResolved: 0, dunningFailed: 0, charged: 0, chargeFailures: 0 };
}
