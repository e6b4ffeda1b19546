/**
 * What a customer does in the portal (P-4..P-6): each action is the admin API's use case with the actor `customer`
 * (K-2: the same audit rows and events), after the feature check (P-7) and the ownership check, both here.
 */
import type { Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import { keyringOf } from '../crypto/envelope.ts';
import { updateCustomer } from '../customers/service.ts';
import type { UpdateCustomerInput } from '../customers/schema.ts';
import type { Db } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import { checkOutAsAdmin } from '../licenses/file-checkout.ts';
import { removeActivation } from '../licenses/service.ts';
import { findPlans } from '../plans/service.ts';
import { changePlan, previewPlanChange } from '../subscriptions/change-plan.ts';
import { updateSubscription } from '../subscriptions/service.ts';
import { requireFeature } from './features.ts';
import { changeablePlans, customerSubscription, portalLicense } from './records.ts';

export type CustomerActor = Extract<Actor, { type: 'customer' }>;

/** `Cancel at period end` (true) and `Keep subscription` (false): the API's PUT with `cancelAtPeriodEnd`. */
export async function setCancelAtPeriodEnd(db: Db, actor: CustomerActor, subscriptionId: string, cancel: boolean) {
  await requireFeature(db, 'cancel');
  await customerSubscription(db, actor.customerId, subscriptionId);
  return updateSubscription(db, subscriptionId, { cancelAtPeriodEnd: cancel }, actor);
}

/** The new plan, when it is one the portal offers for this subscription (P-4); else a refusal naming the field. */
async function offeredPlan(db: Db, customerId: string, subscriptionId: string, newPlanId: string) {
  const sub = await customerSubscription(db, customerId, subscriptionId);
  const current = (await findPlans(db, [sub.plan_id])).get(sub.plan_id)!;
  const plan = (await changeablePlans(db, current)).find((p) => p.id === newPlanId);
  if (!plan)
    throw new AppError('invalid_request', 'Choose one of the plans listed', {
      details: [{ path: 'newPlanId', message: 'must be one of the plans listed' }],
    });
  return plan;
}

/** `Change plan`: the change-plan preview (credit and charge) of a plan the portal offers. */
export async function previewPortalPlanChange(
  db: Db,
  config: Config,
  actor: CustomerActor,
  subscriptionId: string,
  newPlanId: string,
) {
  await requireFeature(db, 'change_plan');
  await offeredPlan(db, actor.customerId, subscriptionId, newPlanId);
  return previewPlanChange(db, subscriptionId, { newPlanId, prorate: true }, { settings: config });
}

/** `Confirm change`: the change as previewed (its instant), the API's change-plan with the customer as actor. */
export async function confirmPortalPlanChange(
  db: Db,
  config: Config,
  actor: CustomerActor,
  subscriptionId: string,
  input: { newPlanId: string; prorationDate?: Date | undefined },
) {
  await requireFeature(db, 'change_plan');
  await offeredPlan(db, actor.customerId, subscriptionId, input.newPlanId);
  return changePlan(db, subscriptionId, { ...input, prorate: true }, actor, { settings: config });
}

/** `Deactivate`: frees the device's seat (the licenses domain's rules, D-35). */
export async function deactivateDevice(db: Db, actor: CustomerActor, licenseId: string, deviceId: string) {
  await requireFeature(db, 'deactivate_devices');
  const { license } = await portalLicense(db, actor.customerId, licenseId);
  await removeActivation(db, license.license_key, deviceId, actor);
  return license;
}

/** `Download license file`: the offline signed file (D-100) for one of the license's devices. */
export async function downloadLicenseFile(
  db: Db,
  config: Config,
  actor: CustomerActor,
  licenseId: string,
  deviceId: string,
) {
  const { license, activations } = await portalLicense(db, actor.customerId, licenseId);
  if (!activations.some((a) => a.device_id === deviceId)) throw new AppError('not_found', 'No such device');
  const file = await checkOutAsAdmin(
    db,
    license.license_key,
    { deviceId },
    { keyring: keyringOf(config), settings: config },
    actor,
  );
  return { license, file };
}

/** P-6 `Billing details`: name, company, billing address and tax id through the customer service. */
export async function updateBillingDetails(
  db: Db,
  actor: CustomerActor,
  input: Pick<UpdateCustomerInput, 'name' | 'company' | 'billingAddress' | 'taxId'>,
) {
  await requireFeature(db, 'billing_details');
  return updateCustomer(db, actor.customerId, input, actor);
}
