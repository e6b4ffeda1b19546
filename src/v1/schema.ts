import { productResponse, serialiseProduct } from '../products/schema.ts';
import type { ProductRow } from '../products/repo.ts';

/**
 * A product as a customer sees it through the v1 API: the catalog fields without the derived
 * metrics (monthlyRevenue, activeUsers, dailyActiveUsers, churnRate), which are the seller's
 * figures across all customers and not for one customer's eyes.
 */
export const v1ProductResponse = productResponse.omit({ monthlyRevenue: true, activeUsers: true, dailyActiveUsers: true, churnRate: true });

export function serialiseV1Product(row: ProductRow) {
  const { monthlyRevenue: _r, activeUsers: _a, dailyActiveUsers: _d, churnRate: _c, ...visible } = serialiseProduct(row);
  return visible;
}
