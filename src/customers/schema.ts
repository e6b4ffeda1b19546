import { z } from 'zod';
import { freeText, iso, lookupText, nameText, plainText, withoutControls } from '../http/schemas.ts';
import { productSummaryResponse, serialiseProductSummary } from '../products/schema.ts';
import type { ProductRow } from '../products/repo.ts';
import type { SubscriptionRow } from '../subscriptions/repo.ts';
import { serialiseSubscription, subscriptionResponse } from '../subscriptions/schema.ts';
import type { CustomerRow } from './repo.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

export const CUSTOMER_TIERS = ['starter', 'professional', 'enterprise'] as const;

/** Optional free text: null or an empty string clears it. */
const optionalField = (text: z.ZodString) =>
  text
    .nullable()
    .transform((v) => (v === '' ? null : v))
    .optional();

const email = withoutControls(z.string({ error: 'must be an email address' }))
  .trim()
  .max(320, 'must be at most 320 characters')
  .pipe(z.email({ error: 'must be an email address' }));

/**
 * POST /api/customers. healthScore and creditBalance are derived (D-22): not fields here, so refused if sent (D-90).
 */
export const createCustomerBody = z
  .object({
    name: nameText(200),
    email,
    company: optionalField(plainText(200)),
    tier: z
      .enum(CUSTOMER_TIERS, { error: `must be one of ${CUSTOMER_TIERS.join(', ')}` })
      .nullable()
      .optional(),
    billingAddress: optionalField(freeText(2000)),
    taxId: optionalField(plainText(100)),
    paymentMethod: optionalField(plainText(200)),
  })
  .meta({
    examples: [
      {
        name: 'Jane Doe',
        email: 'jane.doe@acme.example',
        company: 'Acme Corp',
        tier: 'professional',
        billingAddress: '1 Main Street\nSpringfield, IL 62701\nUS',
        taxId: 'US123456789',
      },
    ],
  });
export type CreateCustomerInput = z.infer<typeof createCustomerBody>;

/** PUT /api/customers/:id: any of the create fields; only the fields sent change, null clears an optional one. */
export const updateCustomerBody = createCustomerBody
  .partial()
  .meta({ examples: [{ tier: 'enterprise', billingAddress: '200 Market Street\nSan Francisco, CA 94105\nUS' }] });
export type UpdateCustomerInput = z.infer<typeof updateCustomerBody>;

/** `q` is required and non-empty; text without any word in it simply matches nothing. */
export const searchCustomersQuery = z.object({
  // Only words (letters, marks, digits) of it reach the database (search-query.ts): any text is safe.
  q: lookupText(
    z
      .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be given once, as text') })
      .trim()
      .min(1, 'must not be empty')
      .max(200, 'must be at most 200 characters'),
  ).meta({ examples: ['acme'] }),
});

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
    healthScore: z.number().int(),
    creditBalance: z.string(),
    creditBalances: z.record(z.string(), z.string()),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({
    examples: [
      {
        id: EXAMPLE_ID.customer,
        name: 'Jane Doe',
        email: 'jane.doe@acme.example',
        company: 'Acme Corp',
        tier: 'professional',
        billingAddress: '1 Main Street\nSpringfield, IL 62701\nUS',
        taxId: 'US123456789',
        paymentMethod: null,
        healthScore: 92,
        creditBalance: '25.00',
        creditBalances: { USD: '25.00' },
        createdAt: '2026-01-05T09:30:00.000Z',
        updatedAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });
/** A customer in lists and search results: with its products. */
export const customerWithProductsResponse = customerResponse
  .extend({ products: z.array(productSummaryResponse) })
  .meta({
    examples: [
      {
        id: EXAMPLE_ID.customer,
        name: 'Jane Doe',
        email: 'jane.doe@acme.example',
        company: 'Acme Corp',
        tier: 'professional',
        billingAddress: '1 Main Street\nSpringfield, IL 62701\nUS',
        taxId: 'US123456789',
        paymentMethod: null,
        healthScore: 92,
        creditBalance: '25.00',
        creditBalances: { USD: '25.00' },
        createdAt: '2026-01-05T09:30:00.000Z',
        updatedAt: '2026-01-05T09:30:00.000Z',
        products: [{ id: EXAMPLE_ID.product, name: 'Acme Analytics', productType: 'saas' }],
      },
    ],
  });
/** The single read: with products and subscriptions. */
export const customerDetailResponse = customerWithProductsResponse
  .extend({ subscriptions: z.array(subscriptionResponse) })
  .meta({
    examples: [
      {
        id: EXAMPLE_ID.customer,
        name: 'Jane Doe',
        email: 'jane.doe@acme.example',
        company: 'Acme Corp',
        tier: 'professional',
        billingAddress: '1 Main Street\nSpringfield, IL 62701\nUS',
        taxId: 'US123456789',
        paymentMethod: null,
        healthScore: 92,
        creditBalance: '25.00',
        creditBalances: { USD: '25.00' },
        createdAt: '2026-01-05T09:30:00.000Z',
        updatedAt: '2026-01-05T09:30:00.000Z',
        products: [{ id: EXAMPLE_ID.product, name: 'Acme Analytics', productType: 'saas' }],
        subscriptions: [
          {
            id: EXAMPLE_ID.subscription,
            customerId: EXAMPLE_ID.customer,
            planId: EXAMPLE_ID.plan,
            status: 'active',
            billingCycle: 'monthly',
            currentPeriodStart: '2026-01-05T09:30:00.000Z',
            currentPeriodEnd: '2026-02-05T09:30:00.000Z',
            cancelAtPeriodEnd: false,
            canceledAt: null,
            trialEnd: null,
            pausedAt: null,
            couponId: null,
            createdAt: '2026-01-05T09:30:00.000Z',
            updatedAt: '2026-01-05T09:30:00.000Z',
          },
        ],
      },
    ],
  });

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
    healthScore: record.health_score,
    creditBalance: record.creditBalance,
    creditBalances: record.creditBalances,
    createdAt: iso(record.created_at)!,
    updatedAt: iso(record.updated_at)!,
    products: record.products.map(serialiseProductSummary),
  };
}

export function serialiseCustomerDetail(record: CustomerRecord, subscriptions: SubscriptionRow[]) {
  return { ...serialiseCustomer(record), subscriptions: subscriptions.map(serialiseSubscription) };
}
