/** The customer API's answers: a customer with what other domains know of it (D-22). */
import { z } from 'zod';
import type { CustomerRow } from '../customers/repo.ts';
import { CUSTOMER_INPUT_EXAMPLE, CUSTOMER_TIERS, TAX_EXEMPT } from '../customers/schema.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import { iso } from '../http/schemas.ts';
import type { ProductRow } from '../products/repo.ts';
import { productSummaryResponse, serialiseProductSummary } from '../products/schema.ts';
import type { SubscriptionRow } from '../subscriptions/repo.ts';
import { SUBSCRIPTION_EXAMPLE, serialiseSubscription, subscriptionResponse } from '../subscriptions/schema.ts';

/** The customer the document shows as an example, bare, with its products, and with its subscriptions. */
const CUSTOMER_EXAMPLE = {
  id: EXAMPLE_ID.customer,
  ...CUSTOMER_INPUT_EXAMPLE,
  paymentMethod: null,
  healthScore: 92,
  creditBalance: '25.00',
  creditBalances: { USD: '25.00' },
  testClockId: null,
  createdAt: '2026-01-05T09:30:00.000Z',
  updatedAt: '2026-01-05T09:30:00.000Z',
};
const CUSTOMER_WITH_PRODUCTS_EXAMPLE = {
  ...CUSTOMER_EXAMPLE,
  products: [{ id: EXAMPLE_ID.product, name: 'Acme Analytics', productType: 'saas' }],
};

export const customerResponse = z
  .object({
    id: z.uuid(),
    name: z.string(),
    email: z.string(),
    company: z.string().nullable(),
    tier: z.enum(CUSTOMER_TIERS).nullable(),
    billingAddress: z.string().nullable(),
    taxId: z.string().nullable(),
    paymentMethod: z.string().nullable(),
    taxRateIds: z.array(z.uuid()),
    taxExempt: z.enum(TAX_EXEMPT),
    healthScore: z.number().int(),
    creditBalance: z.string(),
    creditBalances: z.record(z.string(), z.string()),
    testClockId: z.uuid().nullable().meta({ description: 'The test clock the customer is on (TC-2), set at creation' }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ examples: [CUSTOMER_EXAMPLE] });
/** A customer in lists and search results: with its products. */
export const customerWithProductsResponse = customerResponse
  .extend({ products: z.array(productSummaryResponse) })
  .meta({ examples: [CUSTOMER_WITH_PRODUCTS_EXAMPLE] });
/** The single read: with products and subscriptions. */
export const customerDetailResponse = customerWithProductsResponse
  .extend({ subscriptions: z.array(subscriptionResponse) })
  .meta({ examples: [{ ...CUSTOMER_WITH_PRODUCTS_EXAMPLE, subscriptions: [SUBSCRIPTION_EXAMPLE] }] });

/** A customer row with what the answers derive from other tables. */
export interface CustomerRecord extends CustomerRow {
  /** Store credit in USD (D-22). */
  creditBalance: string;
  /** Store credit in every currency that has ledger entries. */
  creditBalances: Record<string, string>;
  products: Pick<ProductRow, 'id' | 'name' | 'product_type'>[];
}

export function serialiseCustomer(record: CustomerRecord) {
  return {
    id: record.id,
    name: record.name,
    email: record.email,
    company: record.company,
    tier: record.tier as (typeof CUSTOMER_TIERS)[number] | null,
    billingAddress: record.billing_address,
    taxId: record.tax_id,
    paymentMethod: record.payment_method,
    taxRateIds: record.tax_rate_ids,
    taxExempt: record.tax_exempt,
    healthScore: record.health_score,
    creditBalance: record.creditBalance,
    creditBalances: record.creditBalances,
    testClockId: record.test_clock_id,
    createdAt: iso(record.created_at)!,
    updatedAt: iso(record.updated_at)!,
    products: record.products.map(serialiseProductSummary),
  };
}

export function serialiseCustomerDetail(record: CustomerRecord, subscriptions: SubscriptionRow[]) {
  return { ...serialiseCustomer(record), subscriptions: subscriptions.map(serialiseSubscription) };
}
