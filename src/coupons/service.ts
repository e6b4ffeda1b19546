import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { AppError, fieldsRefused } from '../errors.ts';
import type { PageQuery } from '../db/paginate.ts';
import { assertCurrencyPrecision } from '../money-input.ts';
import {
  COUPON_CODE_INDEX,
  findCouponRow,
  findCouponRows,
  insertCouponRow,
  listCouponRows,
  redeemCouponRow,
  type CouponRow,
} from './repo.ts';
import type { CreateCouponInput } from './schema.ts';

/** A coupon's fields as the audit log records them: what the admin set (not the redemption count). */
function audited(row: CouponRow): Record<string, unknown> {
  const { code, percent_off, amount_off, currency, duration, duration_in_cycles, max_redemptions, expires_at } = row;
  return { code, percent_off, amount_off, currency, duration, duration_in_cycles, max_redemptions, expires_at };
}

export function createCoupon(db: Db, input: CreateCouponInput, actor: Actor, now = new Date()): Promise<CouponRow> {
  if (input.amountOff !== undefined) assertCurrencyPrecision(input.amountOff, input.currency!, 'amountOff');
  // A coupon that could never be redeemed is a typo in its date (Stripe refuses a redeem_by in the past too).
  if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
    throw fieldsRefused([{ path: 'expiresAt', message: 'must be in the future' }]);
  }
  return inTransaction(db, async (trx) => {
    const created = await insertCoupon(trx, input);
    await recordAudits(trx, actor, [
      {
        action: 'coupon.create',
        targetType: 'coupon',
        targetId: created.id,
        after: audited(created),
      },
    ]);
    return created;
  });
}

/** The unique index on lower(code) is the guard (D-46): a check-then-insert would race. */
async function insertCoupon(db: Db, input: CreateCouponInput): Promise<CouponRow> {
  try {
    return await insertCouponRow(db, {
      code: input.code,
      percent_off: input.percentOff ?? null,
      amount_off: input.amountOff ?? null,
      currency: input.amountOff !== undefined ? input.currency! : null,
      duration: input.duration,
      duration_in_cycles: input.durationInCycles ?? null,
      max_redemptions: input.maxRedemptions ?? null,
      expires_at: input.expiresAt ?? null,
    });
  } catch (error) {
    if (isUniqueViolation(error, COUPON_CODE_INDEX)) {
      throw new AppError('coupon_code_taken', `A coupon with code ${input.code} exists (codes are case-insensitive)`, {
        details: [{ path: 'code', message: 'is taken' }],
      });
    }
    throw error;
  }
}

export function listCoupons(db: Db, page: PageQuery) {
  return listCouponRows(db, page);
}

const invalidCoupon = (code: string, why: string) =>
  new AppError('invalid_coupon', `Coupon ${code} ${why}`, { details: [{ path: 'couponCode', message: why }] });

/**
 * Redeems `code` for a subscription in `currency` (D-46): unknown, expired, exhausted or foreign-currency codes are 400
 * invalid_coupon.
 */
export async function redeemCoupon(db: Db, code: string, currency: string, at: Date): Promise<CouponRow> {
  const coupon = await redeemCouponRow(db, code, at);
  if (!coupon) throw invalidCoupon(code, 'is unknown, expired or fully redeemed');
  if (coupon.amount_off !== null && coupon.currency !== currency)
    throw invalidCoupon(code, `is in ${coupon.currency}, the plan in ${currency}`);
  return coupon;
}

export function findCoupon(db: Db, id: string): Promise<CouponRow | undefined> {
  return findCouponRow(db, id);
}

/** Many coupons by id in one query (a renewal batch's). */
export function findCoupons(db: Db, ids: string[]): Promise<Map<string, CouponRow>> {
  return findCouponRows(db, ids);
}
