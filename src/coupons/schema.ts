import { z } from 'zod';
import { iso, pageQuery, timestampInput, withoutControls } from '../http/schemas.ts';
import { positiveMoneyString } from '../money-input.ts';
import { currencyCode, formatMoney } from '../money.ts';
import { positivePercentString } from '../percent.ts';
import type { CouponRow } from './repo.ts';

export const COUPON_DURATIONS = ['once', 'repeating', 'forever'] as const;

export const createCouponBody = z
  .object({
    code: withoutControls(z.string())
      .trim()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, - or _'),
    percentOff: positivePercentString.optional(),
    amountOff: positiveMoneyString.optional(),
    currency: currencyCode.optional().meta({ description: 'Required with amountOff, and only then' }),
    duration: z.enum(COUPON_DURATIONS, { error: `must be one of ${COUPON_DURATIONS.join(', ')}` }),
    durationInCycles: z
      .number()
      .int()
      .min(1)
      .max(1200)
      .optional()
      .meta({ description: 'Required when duration is repeating, and only then' }),
    maxRedemptions: z.number().int().min(1).max(100_000_000).optional(),
    expiresAt: timestampInput.optional().meta({ description: 'In the future' }),
  })
  .superRefine((c, ctx) => {
    if ((c.percentOff === undefined) === (c.amountOff === undefined))
      ctx.addIssue({ code: 'custom', path: ['percentOff'], message: 'give exactly one of percentOff or amountOff' });
    if (c.amountOff !== undefined && !c.currency)
      ctx.addIssue({ code: 'custom', path: ['currency'], message: 'is required with amountOff' });
    // A percentage has no currency: one sent with it would be dropped silently.
    if (c.percentOff !== undefined && c.currency !== undefined)
      ctx.addIssue({ code: 'custom', path: ['currency'], message: 'is only for amountOff' });
    if (c.duration === 'repeating' && c.durationInCycles === undefined)
      ctx.addIssue({ code: 'custom', path: ['durationInCycles'], message: 'is required when duration is repeating' });
    if (c.duration !== 'repeating' && c.durationInCycles !== undefined)
      ctx.addIssue({ code: 'custom', path: ['durationInCycles'], message: 'is only for duration repeating' });
  })
  .meta({
    // The first two refinements above, said in the document; durationInCycles's rule is in its description.
    oneOf: [{ required: ['percentOff'] }, { required: ['amountOff', 'currency'] }],
    examples: [
      {
        code: 'LAUNCH20',
        percentOff: '20',
        duration: 'repeating',
        durationInCycles: 3,
        maxRedemptions: 100,
        expiresAt: '2030-06-30T23:59:59Z',
      },
    ],
  });
export type CreateCouponInput = z.infer<typeof createCouponBody>;

export const listCouponsQuery = pageQuery;

export const couponResponse = z
  .object({
    id: z.uuid(),
    code: z.string(),
    percentOff: z.string().nullable(),
    amountOff: z.string().nullable(),
    currency: z.string().nullable(),
    duration: z.enum(COUPON_DURATIONS),
    durationInCycles: z.number().int().nullable(),
    maxRedemptions: z.number().int().nullable(),
    timesRedeemed: z.number().int(),
    expiresAt: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({
    examples: [
      {
        id: 'a8c1d2e3-4f50-4617-8829-3a4b5c6d7e8f',
        code: 'LAUNCH20',
        percentOff: '20',
        amountOff: null,
        currency: null,
        duration: 'repeating',
        durationInCycles: 3,
        maxRedemptions: 100,
        timesRedeemed: 0,
        expiresAt: '2030-06-30T23:59:59.000Z',
        createdAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

export function serialiseCoupon(row: CouponRow) {
  return {
    id: row.id,
    code: row.code,
    percentOff: row.percent_off,
    amountOff: row.amount_off !== null && row.currency ? formatMoney(row.amount_off, row.currency) : null,
    currency: row.currency,
    duration: row.duration,
    durationInCycles: row.duration_in_cycles,
    maxRedemptions: row.max_redemptions,
    timesRedeemed: row.times_redeemed,
    expiresAt: iso(row.expires_at),
    createdAt: iso(row.created_at)!,
  };
}
