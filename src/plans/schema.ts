import { z } from 'zod';
import { iso, nameText, pageQuery, uuid } from '../http/schemas.ts';
import { currencyCode, formatMoney, nonNegativeMoneyString } from '../money.ts';
import { BILLING_CYCLES } from './cycles.ts';
import type { PlanRow } from './repo.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import { taxRateIdsInput } from '../tax-rates/schema.ts';
import { CHARGE_INPUT_EXAMPLE, chargeInput, chargeResponse, serialiseCharge } from '../metering/charge-schema.ts';
import type { ChargeWithMetric } from '../metering/charges.ts';

export const PRICING_MODELS = ['flat', 'usage', 'hybrid'] as const;

export const billingCycle = z.enum(BILLING_CYCLES, { error: `must be one of ${BILLING_CYCLES.join(', ')}` });

export const createPlanBody = z
  .object({
    productId: uuid,
    name: nameText(200),
    pricingModel: z.enum(PRICING_MODELS, { error: `must be one of ${PRICING_MODELS.join(', ')}` }),
    billingCycle,
    basePrice: nonNegativeMoneyString.meta({ description: 'The price per period, in advance; "0" for usage plans' }),
    currency: currencyCode,
    taxRateIds: taxRateIdsInput.optional().meta({
      description:
        "Tax rates of this plan's subscription invoices (T-2); else the customer's; active, at most one inclusive",
    }),
    /** Usage charges, billed in arrears (U-3): none for flat, at least one for usage and hybrid. */
    charges: z
      .array(chargeInput)
      .max(20, 'must hold at most 20 charges')
      .optional()
      .meta({ description: 'Usage charges billed in arrears: none for flat, at least one for usage and hybrid' }),
  })
  .meta({
    examples: [
      {
        productId: EXAMPLE_ID.product,
        name: 'Analytics Pro (monthly)',
        pricingModel: 'flat',
        billingCycle: 'monthly',
        basePrice: '49.00',
        currency: 'USD',
      },
      {
        productId: EXAMPLE_ID.product,
        name: 'API (monthly, per call)',
        pricingModel: 'hybrid',
        billingCycle: 'monthly',
        basePrice: '19.00',
        currency: 'USD',
        charges: [CHARGE_INPUT_EXAMPLE],
      },
    ],
  });
export type CreatePlanInput = z.infer<typeof createPlanBody>;

/** Prices are immutable (D-40): a new price is a new plan. */
export const updatePlanBody = z
  .object({
    name: nameText(200).optional(),
    active: z.boolean().optional(),
    taxRateIds: taxRateIdsInput
      .optional()
      .meta({ description: 'Rates of its next invoices (T-2): active, at most one inclusive' }),
  })
  .meta({ examples: [{ name: 'Analytics Pro (monthly, legacy)', active: false }] });

export const listPlansQuery = pageQuery.extend({
  productId: uuid.optional(),
  active: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
});

export const planResponse = z
  .object({
    id: z.uuid(),
    productId: z.uuid(),
    name: z.string(),
    pricingModel: z.enum(PRICING_MODELS),
    billingCycle,
    basePrice: z.string(),
    currency: z.string(),
    taxRateIds: z.array(z.uuid()),
    active: z.boolean(),
    charges: z.array(chargeResponse),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({
    examples: [
      {
        id: EXAMPLE_ID.plan,
        productId: EXAMPLE_ID.product,
        name: 'Analytics Pro (monthly)',
        pricingModel: 'flat',
        billingCycle: 'monthly',
        basePrice: '49.00',
        currency: 'USD',
        taxRateIds: [],
        active: true,
        charges: [],
        createdAt: '2026-01-05T09:30:00.000Z',
        updatedAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

/** A plan with its usage charges (U-3). */
export type PlanWithCharges = PlanRow & { charges?: ChargeWithMetric[] };

export function serialisePlan(row: PlanWithCharges) {
  return {
    id: row.id,
    productId: row.product_id,
    name: row.name,
    pricingModel: row.pricing_model,
    billingCycle: row.billing_cycle,
    basePrice: formatMoney(row.base_price, row.currency),
    currency: row.currency,
    taxRateIds: row.tax_rate_ids,
    active: row.active,
    charges: (row.charges ?? []).map(serialiseCharge),
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}
