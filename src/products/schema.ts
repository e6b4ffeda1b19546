import { z } from 'zod';
import { currencyCode, formatDecimal, formatMoney, nonNegativeMoneyString } from '../money.ts';
import { freeText, iso, nameText } from '../http/schemas.ts';
import type { ProductRow } from './repo.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

export const PRODUCT_TYPES = ['licensed', 'saas', 'api'] as const;
export const PRODUCT_STATUSES = ['active', 'archived'] as const;

const productType = z.enum(PRODUCT_TYPES, { error: `must be one of ${PRODUCT_TYPES.join(', ')}` });
const productStatus = z.enum(PRODUCT_STATUSES, { error: `must be one of ${PRODUCT_STATUSES.join(', ')}` });
/** Optional free text: null or an empty string clears it. */
const description = freeText(5000)
  .nullable()
  .transform((v) => (v === '' ? null : v));

/**
 * POST /api/products. The derived metrics (monthlyRevenue, activeUsers, dailyActiveUsers,
 * churnRate; D-20) are not fields here, so a body carrying them is refused like any unknown
 * field (D-90).
 */
export const createProductBody = z
  .object({
    name: nameText(200),
    productType,
    price: nonNegativeMoneyString,
    description: description.optional(),
    status: productStatus.optional(),
    /** Our addition: the currency `price` is in (ISO 4217), default USD. */
    currency: currencyCode.optional(),
  })
  .meta({
    examples: [
      {
        name: 'Acme Analytics',
        productType: 'saas',
        price: '49.00',
        currency: 'USD',
        description: 'Dashboards and reports for up to 10 seats',
      },
    ],
  });
export type CreateProductInput = z.infer<typeof createProductBody>;

/** PUT /api/products/:id: the create fields, each optional; only the fields sent change. */
export const updateProductBody = createProductBody
  .partial()
  .meta({ examples: [{ price: '59.00', description: 'Dashboards and reports for up to 25 seats' }] });
export type UpdateProductInput = z.infer<typeof updateProductBody>;

export const productResponse = z
  .object({
    id: z.uuid(),
    name: z.string(),
    productType: z.enum(PRODUCT_TYPES),
    description: z.string().nullable(),
    price: z.string(),
    currency: z.string(),
    status: z.enum(PRODUCT_STATUSES),
    monthlyRevenue: z.string(),
    activeUsers: z.number().int(),
    dailyActiveUsers: z.number().int(),
    churnRate: z.string(),
    /**
     * When the derived metrics above were computed (src/products/metrics.ts, every 5 minutes); null before the first
     * refresh.
     */
    metricsRefreshedAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({
    examples: [
      {
        id: EXAMPLE_ID.product,
        name: 'Acme Analytics',
        productType: 'saas',
        description: 'Dashboards and reports for up to 10 seats',
        price: '49.00',
        currency: 'USD',
        status: 'active',
        monthlyRevenue: '2450.00',
        activeUsers: 50,
        dailyActiveUsers: 31,
        churnRate: '0.0200',
        metricsRefreshedAt: '2026-02-05T09:30:00.000Z',
        createdAt: '2026-01-05T09:30:00.000Z',
        updatedAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

/** The embedded form of a product inside a customer (D-22). */
export const productSummaryResponse = productResponse.pick({ id: true, name: true, productType: true });

export function serialiseProduct(row: ProductRow) {
  return {
    id: row.id,
    name: row.name,
    productType: row.product_type as (typeof PRODUCT_TYPES)[number],
    description: row.description,
    price: formatMoney(row.price, row.currency),
    currency: row.currency,
    status: row.status as (typeof PRODUCT_STATUSES)[number],
    monthlyRevenue: formatMoney(row.monthly_revenue, row.currency),
    activeUsers: row.active_users,
    dailyActiveUsers: row.daily_active_users,
    churnRate: formatDecimal(row.churn_rate, 4),
    metricsRefreshedAt: iso(row.metrics_refreshed_at),
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}

export function serialiseProductSummary(row: Pick<ProductRow, 'id' | 'name' | 'product_type'>) {
  return { id: row.id, name: row.name, productType: row.product_type as (typeof PRODUCT_TYPES)[number] };
}
