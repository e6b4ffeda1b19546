import { z } from 'zod';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import { freeText, iso, nameText, pageQuery, uuid } from '../http/schemas.ts';
import { money } from '../money.ts';
import { percentString } from '../percent.ts';
import type { TaxRateRow } from './repo.ts';

/** The most rates a plan, a customer, an invoice or a line names. */
export const MAX_TAX_RATES = 5;

/** T-1: 0 to 100 with at most four decimals (the column's scale: nothing is rounded away silently). */
export const taxPercentage = percentString.refine((v) => !/\.\d{5,}$/.test(v), 'must have at most 4 decimals');

/** Rate ids on a plan, a customer, an invoice or a line (T-2); that they exist and are active is the service's. */
export const taxRateIdsInput = z
  .array(uuid)
  .max(MAX_TAX_RATES, `must name at most ${MAX_TAX_RATES} tax rates`)
  .refine((ids) => new Set(ids).size === ids.length, 'must not name a tax rate twice');

export const UNCHANGEABLE = 'cannot be changed: create a new tax rate (invoices keep the terms they were issued with)';

export const createTaxRateBody = z
  .object({
    name: nameText(100),
    percentage: taxPercentage,
    inclusive: z.boolean().default(false),
    country: z
      .string()
      .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code in capitals, such as "DE"')
      .optional(),
    description: freeText(500).optional(),
  })
  .meta({
    examples: [{ name: 'VAT DE', percentage: '19', inclusive: false, country: 'DE', description: 'German VAT' }],
  });
export type CreateTaxRateInput = z.infer<typeof createTaxRateBody>;

/**
 * T-1: only the name, description and active flag change. `percentage` and `inclusive` may be sent back as they are
 * (a client that PUTs what it read); a changed one is refused by the service, which knows the stored terms.
 */
export const updateTaxRateBody = z
  .object({
    name: nameText(100).optional(),
    description: freeText(500).nullable().optional(),
    active: z.boolean().optional(),
    percentage: z
      .unknown()
      .optional()
      .meta({ description: `Only its current value is accepted; another ${UNCHANGEABLE}` }),
    inclusive: z
      .unknown()
      .optional()
      .meta({ description: `Only its current value is accepted; another ${UNCHANGEABLE}` }),
  })
  .meta({ examples: [{ name: 'VAT DE (standard)', active: false }] });
export type UpdateTaxRateInput = z.infer<typeof updateTaxRateBody>;

export const listTaxRatesQuery = pageQuery.extend({
  active: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
});

export const taxRateResponse = z
  .object({
    id: z.uuid(),
    name: z.string(),
    percentage: z.string(),
    inclusive: z.boolean(),
    country: z.string().nullable(),
    description: z.string().nullable(),
    active: z.boolean(),
    createdAt: z.string(),
  })
  .meta({
    examples: [
      {
        id: EXAMPLE_ID.taxRate,
        name: 'VAT DE',
        percentage: '19',
        inclusive: false,
        country: 'DE',
        description: 'German VAT',
        active: true,
        createdAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

/** A stored percentage as written ("19.0000" is "19", "8.2500" is "8.25"). */
export function percentageText(stored: string): string {
  return money(stored).toString();
}

export function serialiseTaxRate(row: TaxRateRow) {
  return {
    id: row.id,
    name: row.name,
    percentage: percentageText(row.percentage),
    inclusive: row.inclusive,
    country: row.country,
    description: row.description,
    active: row.active,
    createdAt: iso(row.created_at)!,
  };
}
