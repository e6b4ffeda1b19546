import { z } from 'zod';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import { freeText, lookupText, nameText, plainText, uuid, withoutControls } from '../http/schemas.ts';
import { taxRateIdsInput } from '../tax-rates/schema.ts';

export const CUSTOMER_TIERS = ['starter', 'professional', 'enterprise'] as const;

/** T-3: a customer's tax status. */
export const TAX_EXEMPT = ['none', 'exempt', 'reverse'] as const;
export type TaxExempt = (typeof TAX_EXEMPT)[number];

/** Optional free text: null or an empty string clears it. */
const optionalField = (text: z.ZodString) =>
  text
    .nullable()
    .transform((v) => (v === '' ? null : v))
    .optional();

const emailAddress = z.email({ error: 'must be an email address' });

/** Whether `text` could be a customer's email (the portal's sign-in form asks before it looks anyone up). */
export const isEmailAddress = (text: string) => emailAddress.safeParse(text).success;

/**
 * Trimmed, then checked as an email. The document shows a pipe's input side, so it is told the check of the other
 * side: the format and zod's own pattern for it, which refuses every control character too (issue 33).
 */
const email = withoutControls(z.string({ error: 'must be an email address' }))
  .trim()
  .max(320, 'must be at most 320 characters')
  .pipe(emailAddress)
  .meta({ format: 'email', pattern: emailAddress.def.pattern?.source ?? z.regexes.email.source });

/** The customer the document shows as a create body; the answers' example (reporting/) is this one stored. */
export const CUSTOMER_INPUT_EXAMPLE = {
  name: 'Jane Doe',
  email: 'jane.doe@acme.example',
  company: 'Acme Corp',
  tier: 'professional',
  billingAddress: '1 Main Street\nSpringfield, IL 62701\nUS',
  taxId: 'US123456789',
  taxRateIds: [EXAMPLE_ID.taxRate],
  taxExempt: 'none',
};

/**
 * POST /api/customers. healthScore and creditBalance are derived (D-22): not fields here, so refused if sent
 * (D-90).
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
    taxId: optionalField(plainText(100)).meta({ description: 'Required while taxExempt is reverse (T-3)' }),
    paymentMethod: optionalField(plainText(200)),
    taxRateIds: taxRateIdsInput.optional().meta({
      description:
        "Tax rates of this customer's invoices when their plan names none (T-2): active ones, at most one inclusive",
    }),
    taxExempt: z
      .enum(TAX_EXEMPT, { error: `must be one of ${TAX_EXEMPT.join(', ')}` })
      .optional()
      .meta({ description: 'T-3: exempt or reverse (no tax; reverse needs a taxId and puts the note on invoices)' }),
    testClockId: uuid.optional().meta({
      description:
        'TC-2: puts the customer on this test clock, for good; its records then live by the clock. Create only.',
    }),
  })
  .meta({ examples: [CUSTOMER_INPUT_EXAMPLE] });
export type CreateCustomerInput = z.infer<typeof createCustomerBody>;

/** PUT /api/customers/:id: any of the create fields; only the fields sent change, null clears an optional one. */
export const updateCustomerBody = createCustomerBody
  .omit({ testClockId: true })
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
