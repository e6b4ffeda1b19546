import { z } from 'zod';
import { iso, nameText, pageQuery, uuid } from '../http/schemas.ts';
import type { PaymentMethodRow } from './repo.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

/** Stored methods belong to a provider (D-56); bank transfers and manual payments have none to store. */
export const PAYMENT_METHOD_TYPES = ['provider_a', 'provider_b', 'provider_c'] as const;

export const createPaymentMethodBody = z
  .object({
    customerId: uuid,
    type: z.enum(PAYMENT_METHOD_TYPES, { error: `must be one of ${PAYMENT_METHOD_TYPES.join(', ')}` }),
    providerMethodId: nameText(255),
    isDefault: z.boolean({ error: 'must be true or false' }).default(false),
  })
  .meta({
    examples: [
      { customerId: EXAMPLE_ID.customer, type: 'provider_a', providerMethodId: 'pm_1QxR7a2eZvKYlo2C', isDefault: true },
    ],
  });
export type CreatePaymentMethodInput = z.output<typeof createPaymentMethodBody>;

/** customerId is required (D-56): without it the list is 400. */
export const listPaymentMethodsQuery = pageQuery.extend({ customerId: uuid.meta({ examples: [EXAMPLE_ID.customer] }) });

export const paymentMethodResponse = z
  .object({
    id: z.uuid(),
    customerId: z.uuid(),
    type: z.enum(PAYMENT_METHOD_TYPES),
    providerMethodId: z.string(),
    isDefault: z.boolean(),
    createdAt: z.string(),
  })
  .meta({
    examples: [
      {
        id: EXAMPLE_ID.paymentMethod,
        customerId: EXAMPLE_ID.customer,
        type: 'provider_a',
        providerMethodId: 'pm_1QxR7a2eZvKYlo2C',
        isDefault: true,
        createdAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

export function serialisePaymentMethod(row: PaymentMethodRow) {
  return {
    id: row.id,
    customerId: row.customer_id,
    type: row.type,
    providerMethodId: row.provider_method_id,
    isDefault: row.is_default,
    createdAt: iso(row.created_at)!,
  };
}
