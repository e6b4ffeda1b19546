import { productResponse, serialiseProduct } from '../products/schema.ts';
import type { ProductRow } from '../products/repo.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

/**
 * A product as a customer sees it through the v1 API: the catalog fields without the derived
 * metrics (monthlyRevenue, activeUsers, dailyActiveUsers, churnRate), which are the seller's
 * figures across all customers and not for one customer's eyes.
 */
export const v1ProductResponse = productResponse
  .omit({ monthlyRevenue: true, activeUsers: true, dailyActiveUsers: true, churnRate: true })
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
        metricsRefreshedAt: '2026-02-05T09:30:00.000Z',
        createdAt: '2026-01-05T09:30:00.000Z',
        updatedAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

export function serialiseV1Product(row: ProductRow) {
  const {
    monthlyRevenue: _r,
    activeUsers: _a,
    dailyActiveUsers: _d,
    churnRate: _c,
    ...visible
  } = serialiseProduct(row);
  return visible;
}
