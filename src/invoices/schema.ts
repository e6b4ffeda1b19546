import { z } from 'zod';
import { freeText, iso, pageQuery, timestampInput, uuid } from '../http/schemas.ts';
import { currencyCode, DEFAULT_CURRENCY, formatMoney, formatUnitPrice, moneyString } from '../money.ts';
import { percentString } from '../percent.ts';
import { amountDue } from '../pricing/amount-due.ts';
import { taxRateIdsInput } from '../tax-rates/schema.ts';
import type { InvoiceRow, LineItemRow } from './repo.ts';
import { invoiceTaxes, taxNote } from './taxes.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

export const INVOICE_STATUSES = ['draft', 'issued', 'paid', 'overdue', 'void'] as const;
export const SETTABLE_STATUSES = ['draft', 'issued', 'paid', 'void'] as const;

export const lineItemInput = z.object({
  description: freeText(500).min(1, 'must not be empty'),
  quantity: z
    .number({ error: 'must be an integer >= 1' })
    .int('must be an integer >= 1')
    .min(1, 'must be an integer >= 1')
    .max(1_000_000_000),
  unitPrice: moneyString,
  taxRateIds: taxRateIdsInput
    .optional()
    .meta({ description: "T-2: this line's own rates (win over the invoice's; active, at most one inclusive)" }),
});

/** Percent as a decimal string, 0..100 (D-51). */
export const taxRate = percentString;

/** The most lines an invoice is created with (the console's form grows up to it). */
export const MAX_LINE_ITEMS = 500;

export const createInvoiceBody = z
  .object({
    customerId: uuid,
    lineItems: z
      .array(lineItemInput)
      .min(1, 'must hold at least one line item')
      .max(MAX_LINE_ITEMS, `must hold at most ${MAX_LINE_ITEMS} line items`),
    subscriptionId: uuid
      .optional()
      .meta({ description: "A subscription of this invoice's customer whose plan bills in this invoice's currency" }),
    dueDate: timestampInput.optional(),
    currency: currencyCode.default(DEFAULT_CURRENCY),
    taxRate: taxRate
      .optional()
      .meta({ description: "D-51's one percent; not with taxRateIds (the invoice's or a line's)" }),
    taxRateIds: taxRateIdsInput.optional().meta({
      description:
        "T-2: the invoice's tax rates (active, at most one inclusive); when absent, the customer's, else the " +
        "default setting's; not with taxRate",
    }),
    status: z.enum(['draft', 'issued'], { error: 'must be draft or issued' }).default('draft'),
  })
  .superRefine((body, ctx) => {
    if (body.taxRate === undefined) return;
    const named = body.taxRateIds !== undefined || body.lineItems.some((l) => l.taxRateIds !== undefined);
    if (named)
      ctx.addIssue({ code: 'custom', path: ['taxRate'], message: 'give either taxRate or taxRateIds, not both' });
  })
  .meta({
    examples: [
      {
        customerId: EXAMPLE_ID.customer,
        lineItems: [
          { description: 'Onboarding workshop', quantity: 2, unitPrice: '150.00' },
          { description: 'Priority support (January)', quantity: 1, unitPrice: '99.00' },
        ],
        currency: 'USD',
        taxRate: '8.25',
        dueDate: '2026-02-04',
        status: 'draft',
      },
    ],
  });
export type CreateInvoiceInput = z.infer<typeof createInvoiceBody>;

export const updateInvoiceBody = z
  .object({
    status: z.enum(SETTABLE_STATUSES, { error: `must be one of ${SETTABLE_STATUSES.join(', ')}` }),
    // C-12: why an invoice is marked paid (kept on the payment that settles it and on the audit row).
    note: freeText(500)
      .min(1, 'must not be empty')
      .optional()
      .describe('marking paid: kept on the manual payment that settles the amount due, and on the audit row'),
  })
  .meta({ examples: [{ status: 'issued' }] });

export const listInvoicesQuery = pageQuery.extend({
  status: z.enum(INVOICE_STATUSES).optional(),
  customerId: uuid.optional(),
});

export const lineItemResponse = z.object({
  description: z.string(),
  quantity: z.number().int(),
  unitPrice: z.string(),
  amount: z.string(),
  taxRateIds: z.array(z.uuid()),
});

/** T-5: one rate's share of an invoice (or of a credit note, T-6). */
export const taxEntryResponse = z.object({
  taxRateId: z.uuid().nullable().meta({ description: "null for D-51's one percent, named Tax" }),
  name: z.string(),
  percentage: z.string(),
  inclusive: z.boolean(),
  taxableAmount: z.string(),
  amount: z.string(),
  /** A usage line's metric, quantity, period and tiers (U-11); absent on other lines. */
  usage: z.record(z.string(), z.unknown()).optional(),
});

export const invoiceResponse = z
  .object({
    id: z.uuid(),
    customerId: z.uuid(),
    subscriptionId: z.uuid().nullable(),
    invoiceNumber: z.string(),
    status: z.enum(INVOICE_STATUSES),
    currency: z.string(),
    lineItems: z.array(lineItemResponse),
    subtotal: z.string(),
    taxRate: z.string(),
    taxAmount: z.string(),
    taxes: z.array(taxEntryResponse),
    taxExempt: z.enum(['none', 'exempt', 'reverse']),
    taxNote: z.string().nullable().meta({ description: "T-3: a reverse charge's note with the customer's tax ID" }),
    total: z.string(),
    amountPaid: z.string(),
    creditApplied: z.string(),
    creditedAmount: z.string(),
    amountDue: z.string(),
    dueDate: z.string().nullable(),
    issuedAt: z.string().nullable(),
    paidAt: z.string().nullable(),
    voidedAt: z.string().nullable(),
    pdfUrl: z.string(),
    hostedUrl: z
      .string()
      .nullable()
      .meta({ description: 'The hosted invoice page (H-1), the same on every read; null for a draft' }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({
    examples: [
      {
        id: EXAMPLE_ID.invoice,
        customerId: EXAMPLE_ID.customer,
        subscriptionId: null,
        invoiceNumber: 'INV-2026-000042',
        status: 'issued',
        currency: 'USD',
        lineItems: [
          { description: 'Onboarding workshop', quantity: 2, unitPrice: '150.00', amount: '300.00', taxRateIds: [] },
          {
            description: 'Priority support (January)',
            quantity: 1,
            unitPrice: '99.00',
            amount: '99.00',
            taxRateIds: [],
          },
        ],
        subtotal: '399.00',
        taxRate: '8.25',
        taxAmount: '32.92',
        taxes: [
          {
            taxRateId: null,
            name: 'Tax',
            percentage: '8.25',
            inclusive: false,
            taxableAmount: '399.00',
            amount: '32.92',
          },
        ],
        taxExempt: 'none',
        taxNote: null,
        total: '431.92',
        amountPaid: '0.00',
        creditApplied: '0.00',
        creditedAmount: '0.00',
        amountDue: '431.92',
        dueDate: '2026-01-19T00:00:00.000Z',
        issuedAt: '2026-01-05T09:30:00.000Z',
        paidAt: null,
        voidedAt: null,
        pdfUrl: `/api/billing/invoices/${EXAMPLE_ID.invoice}/pdf`,
        hostedUrl: 'https://billing.example.com/i/q3Jx1m0h7JvQyVv1c8m2Zr6Jp0kq5o9s4H2bT7wLxYe',
        createdAt: '2026-01-05T09:30:00.000Z',
        updatedAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

export function invoicePdfPath(id: string): string {
  return `/api/billing/invoices/${id}/pdf`;
}

export function serialiseInvoice(
  invoice: InvoiceRow,
  lines: LineItemRow[],
  pdfUrl = invoicePdfPath(invoice.id),
  hostedUrl: string | null = null,
) {
  const m = (v: string) => formatMoney(v, invoice.currency);
  return {
    id: invoice.id,
    customerId: invoice.customer_id,
    subscriptionId: invoice.subscription_id,
    invoiceNumber: invoice.invoice_number,
    status: invoice.status,
    currency: invoice.currency,
    lineItems: lines.map((l) => ({
      description: l.description,
      quantity: l.quantity,
      unitPrice: formatUnitPrice(l.unit_price, invoice.currency),
      amount: m(l.amount),
      taxRateIds: l.tax_rate_ids,
      ...(l.usage ? { usage: l.usage as Record<string, unknown> } : {}),
    })),
    subtotal: m(invoice.subtotal),
    taxRate: invoice.tax_rate,
    taxAmount: m(invoice.tax_amount),
    taxes: invoiceTaxes(invoice),
    taxExempt: invoice.tax_exempt,
    taxNote: taxNote(invoice),
    total: m(invoice.total),
    amountPaid: m(invoice.amount_paid),
    creditApplied: m(invoice.credit_applied),
    creditedAmount: m(invoice.credited_amount),
    amountDue: formatMoney(amountDue(invoice), invoice.currency),
    dueDate: iso(invoice.due_date),
    issuedAt: iso(invoice.issued_at),
    paidAt: iso(invoice.paid_at),
    voidedAt: iso(invoice.voided_at),
    pdfUrl,
    hostedUrl,
    createdAt: iso(invoice.created_at)!,
    updatedAt: iso(invoice.updated_at)!,
  };
}
