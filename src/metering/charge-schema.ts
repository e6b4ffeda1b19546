import { z } from 'zod';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import { uuid } from '../http/schemas.ts';
import { DECIMAL_PATTERN, moneyString, nonNegativeMoneyString } from '../money.ts';
import { CHARGE_MODELS } from '../pricing/usage.ts';
import type { ChargeWithMetric } from './repo.ts';

/** A unit price: non-negative, up to 12 decimals (D-91). */
const unitPrice = moneyString
  .refine((v) => !v.startsWith('-'), 'must not be negative')
  .refine((v) => (v.split('.')[1] ?? '').length <= 12, 'must have at most 12 decimals');

/** A quantity bound (free units, a tier's upTo): a non-negative decimal string (quantities may be fractional: GB). */
const quantity = z
  .string({ error: 'must be a decimal string such as "1000"' })
  .regex(DECIMAL_PATTERN, 'must be a decimal string such as "1000"')
  .refine((v) => !v.startsWith('-'), 'must not be negative')
  .refine((v) => v.replace('.', '').length <= 30, 'has too many digits');

export const tierInput = z.object({
  upTo: quantity.nullable(),
  unitPrice,
  flatFee: nonNegativeMoneyString.optional(),
});

export const chargeInput = z.object({
  metricId: uuid.meta({ description: 'A billable metric; each metric at most once per plan' }),
  model: z.enum(CHARGE_MODELS, { error: `must be one of ${CHARGE_MODELS.join(', ')}` }).meta({
    description:
      'per_unit takes unitPrice (and freeUnits); package takes packageSize and packagePrice (and freeUnits); ' +
      'graduated and volume take tiers. A field the model does not take is refused.',
  }),
  unitPrice: unitPrice.optional().meta({ description: 'per_unit only: the price of one unit, up to 12 decimals' }),
  freeUnits: quantity.optional().meta({ description: 'per_unit and package: units free of charge (default 0)' }),
  packageSize: z.number().int('must be a whole number').min(1, 'must be at least 1').max(1_000_000_000).optional(),
  packagePrice: nonNegativeMoneyString.optional(),
  tiers: z
    .array(tierInput)
    .min(1, 'must hold at least one tier')
    .max(50, 'must hold at most 50 tiers')
    .optional()
    .meta({
      description:
        'graduated and volume only: ascending by upTo (above 0), only the last open (upTo null); ' +
        'tier i covers (upTo(i-1), upTo(i)]',
    }),
});
export type ChargeInput = z.infer<typeof chargeInput>;

export const CHARGE_INPUT_EXAMPLE = {
  metricId: EXAMPLE_ID.metric,
  model: 'graduated' as const,
  tiers: [
    { upTo: '1000', unitPrice: '0' },
    { upTo: '100000', unitPrice: '0.0015' },
    { upTo: null, unitPrice: '0.001', flatFee: '5.00' },
  ],
};

export const chargeResponse = z
  .object({
    id: z.uuid(),
    metricId: z.uuid(),
    metricCode: z.string(),
    model: z.enum(CHARGE_MODELS),
    unitPrice: z.string().nullable(),
    freeUnits: z.string().nullable(),
    packageSize: z.number().nullable(),
    packagePrice: z.string().nullable(),
    tiers: z
      .array(z.object({ upTo: z.string().nullable(), unitPrice: z.string(), flatFee: z.string().nullable() }))
      .nullable(),
  })
  .meta({
    examples: [
      {
        id: EXAMPLE_ID.charge,
        metricCode: 'api_calls',
        unitPrice: null,
        freeUnits: null,
        packageSize: null,
        packagePrice: null,
        ...CHARGE_INPUT_EXAMPLE,
        tiers: CHARGE_INPUT_EXAMPLE.tiers.map((t) => ({ flatFee: null, ...t })),
      },
    ],
  });

export function serialiseCharge(row: ChargeWithMetric) {
  return {
    id: row.id,
    metricId: row.metric_id,
    metricCode: row.metric.code,
    model: row.model,
    unitPrice: row.unit_price,
    freeUnits: row.free_units,
    packageSize: row.package_size,
    packagePrice: row.package_price,
    tiers: row.tiers?.map((t) => ({ upTo: t.upTo, unitPrice: t.unitPrice, flatFee: t.flatFee ?? null })) ?? null,
  };
}
