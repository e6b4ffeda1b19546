import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import { freeText } from './http/schemas.ts';
import { AppError } from './errors.ts';
import { DECIMAL_PATTERN, minorUnits, money, moneyString } from './money.ts';

/*
 * Money as request bodies give it. Payments, refunds, store credits and credit notes all take it, so
 * it lives beside money.ts rather than in one of them.
 */

/**
 * A stored amount must be exact in its currency: "10.001" USD would print as "10.00" (D-3) while
 * adding 10.001 to the books, so finer amounts are refused rather than rounded (D-91). Unit prices are
 * not stored amounts: a line's amount is computed from them and rounded once (D-51).
 */
export function assertCurrencyPrecision(amount: string, currency: string, path = 'amount'): void {
  if (exactInCurrency(amount, currency)) return;
  const places = minorUnits(currency);
  const message =
    places === 0
      ? `must be a whole number of ${currency}`
      : `must have at most ${places} decimal places in ${currency}`;
  throw new AppError('invalid_amount', `The amount needs correcting: ${path}: ${message}`, {
    details: [{ path, message }],
  });
}

/** Whether `amount` has no more decimals than its currency's minor unit (D-91): "10.005" USD has not. */
export function exactInCurrency(amount: string | Decimal, currency: string): boolean {
  return money(amount).decimalPlaces() <= minorUnits(currency);
}

/**
 * The amount as stored: fixed-point at the currency's minor unit, never exponent notation. Only for
 * amounts already exact in the currency (assertCurrencyPrecision, or sums of such amounts).
 */
export function storedAmount(amount: string | Decimal, currency: string): string {
  return money(amount).toFixed(minorUnits(currency));
}

/** A money field that must be above zero where the decision names no code of its own (D-57, D-58). */
export const positiveMoneyString = moneyString.refine(
  // zod runs this refinement even after the pattern failed; such a value already has its message.
  (v) => !DECIMAL_PATTERN.test(v) || money(v).gt(0),
  'must be greater than 0',
);

/** Free text beside an amount (reason, description): optional, trimmed; "" and null mean none. */
export const optionalNote = freeText(1000)
  .nullish()
  .transform((v) => (v ? v : null));

/** Why money went back (C-14): free text, required, 1-500 characters once trimmed. */
export const requiredReason = freeText(500).min(1, 'must not be empty');

/** The closed list of reason codes a refund or a credit note may carry (C-14), as Stripe's refund reasons. */
export const REASON_CODES = ['duplicate', 'fraudulent', 'requested_by_customer', 'service_issue', 'other'] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

/** An optional reason code from the closed list (C-14); "" and null mean none. */
export const optionalReasonCode = z
  .enum(REASON_CODES, { error: `must be one of ${REASON_CODES.join(', ')}` })
  .nullish()
  .transform((v) => v ?? null);
