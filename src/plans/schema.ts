import { z } from 'zod';
import { iso, nameText, pageQuery, uuid } from '../http/schemas.ts';
import { currencyCode, formatMoney, nonNegativeMoneyString } from '../money.ts';
import { BILLING_CYCLES } from './cycles.ts';
import type { PlanRow } from './repo.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import { taxRateIdsInput } from '../tax-rates/schema.ts';

export const PRICING_MODELS = ['flat'] as const;

export const billingCycle = z.enum(BILLING_CYCLES, { error: `must be one of ${BILLING_CYCLES.join(', ')}` });

export const createPlanBody = z
  .object({
    productId: uuid,
    name: nameText(200),
    pricingModel: z.enum(PRICING_MODELS, {
      error: `must be one of ${PRICING_MODELS.join(', ')} (the only supported pricing model)`,
    }),
    billingCycle,
    basePrice: nonNegativeMoneyString,
    currency: currencyCode,
    taxRateIds: taxRateIdsInput.optional().meta({
      description:
        "Tax rates of this plan's subscription invoices (T-2); else the customer's; active, at most one inclusive",
    }),
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
        createdAt: '2026-01-05T09:30:00.000Z',
        updatedAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

export function serialisePlan(row: PlanRow) {
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
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}
