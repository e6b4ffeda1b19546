/**
 * The API's actions that can settle an invoice (settlement/service.ts): their answers are the payments', credits'
 * and credit notes' own, under those tags.
 */
import { createCreditNoteBody, creditNoteResponse, serialiseCreditNote } from '../credit-notes/schema.ts';
import { createCreditBody } from '../credits/schema.ts';
import { defineRoute } from '../http/route.ts';
import { createPaymentBody, paymentResponse, serialisePayment } from '../payments/schema.ts';
import { createdCreditResponse, serialiseCreatedCredit } from './schema.ts';
import { grantCredit, issueCreditNote, receivePayment } from './service.ts';

export const settlementRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/payments',
    auth: 'admin',
    tag: 'Payments',
    summary: 'Record a payment on an issued or overdue invoice; the invoice becomes paid when nothing is left to pay',
    body: createPaymentBody,
    responses: {
      201: { description: 'Recorded', schema: paymentResponse },
      400: {
        description:
          'invalid_request, invalid_amount, invoice_not_found, amount_exceeds_due (amount not in (0, amount due])',
      },
      409: {
        description:
          'invoice_not_payable (draft or void), duplicate_payment (paymentMethod + providerReference seen before)',
      },
    },
    errors: ['invoice_not_found', 'invoice_not_payable', 'duplicate_payment', 'amount_exceeds_due', 'invalid_amount'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialisePayment(await receivePayment(deps.db, body, actor)),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/billing/credits',
    auth: 'admin',
    tag: 'Store credits',
    summary:
      'Add store credit to a customer; it is spent at once on ' +
      "the customer's open invoices in that currency, oldest first",
    body: createCreditBody,
    responses: {
      201: { description: 'Credited', schema: createdCreditResponse },
      400: {
        description:
          'invalid_request, invalid_amount, customer_not_found, ' +
          'currency_mismatch (a currency the customer has no invoice or subscription in, C-14)',
      },
    },
    errors: ['customer_not_found', 'invalid_amount', 'currency_mismatch'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialiseCreatedCredit(await grantCredit(deps.db, body, actor)),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/billing/credit-notes',
    auth: 'admin',
    tag: 'Credit notes',
    summary:
      'Issue a credit note CN-{YEAR}-{SEQ}: lowers the amount due of an unpaid invoice, ' +
      'or adds store credit for a paid one',
    body: createCreditNoteBody,
    responses: {
      201: { description: 'Issued', schema: creditNoteResponse },
      400: {
        description:
          'invalid_request, invalid_amount, invoice_not_found, ' +
          'amount_exceeds_invoice (credit notes above the invoice total)',
      },
      409: { description: 'invoice_not_creditable (draft or void)' },
    },
    errors: ['invoice_not_found', 'invoice_not_creditable', 'amount_exceeds_invoice', 'invalid_amount'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialiseCreditNote(await issueCreditNote(deps.db, body, actor)),
    }),
  }),
];
