/**
 * TC-5: a test clock customer's charges call no provider. The leading provider's test method names decide the
 * outcome, as its test mode would: `pm_card_visa` succeeds, `pm_card_chargeDeclined` is declined with
 * `card_declined`, and any other method is declined with `test_clock_no_test_method`. The intent id is made from the
 * attempt's idempotency key, so an attempt re-sent after a crash answers the same intent (recorded once).
 */
import type { ErrorCode } from '../errors.ts';
import type { ChargeOutcome, OffSessionChargeInput } from './provider-a.ts';

export const TEST_METHOD_SUCCEEDS = 'pm_card_visa';
export const TEST_METHOD_DECLINED = 'pm_card_chargeDeclined';
export const NO_TEST_METHOD: ErrorCode = 'test_clock_no_test_method';

export function chargeTestMethod(input: OffSessionChargeInput): ChargeOutcome {
  const paymentIntentId = `pi_test_${input.idempotencyKey}`;
  if (input.providerMethodId === TEST_METHOD_SUCCEEDS) return { status: 'succeeded', paymentIntentId };
  if (input.providerMethodId === TEST_METHOD_DECLINED)
    return { status: 'declined', paymentIntentId, reason: 'card_declined' };
  return { status: 'declined', paymentIntentId: null, reason: NO_TEST_METHOD };
}
