/**
 * Money a provider took, recorded exactly once and never lost (D-62, D-83): the payment goes on the
 * invoice up to what is due; whatever the invoice can no longer take (it was paid meanwhile, voided, or
 * the provider took more) becomes the customer's store credit. Used by the provider-events worker and
 * by auto-charge, in the caller's transaction. The service takes the money by itself, so its audit row's
 * actor is `system` (C-11).
 */
import { addCustomerCredit } from '../credits/grant.ts';
import type { Db } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import { amountDue } from '../invoices/amounts.ts';
import { lockInvoice } from '../invoices/service.ts';
import { formatMoney, Money, money } from '../money.ts';
import { findPaymentByReference, type PaymentMethod } from './repo.ts';
import { recordPayment } from './service.ts';
import { SYSTEM_ACTOR } from '../audit/actor.ts';

export interface ProviderPayment {
  paymentMethod: PaymentMethod;
  reference: string;
  invoiceId: string;
  amount: string;
  currency: string;
  now: Date;
}

export type ProviderPaymentResult =
  | { outcome: 'recorded'; paymentId: string; credited: string | null }
  | { outcome: 'credited'; credited: string }
  | { outcome: 'already_recorded' };

/** Throws AppError invoice_not_found or currency_mismatch (permanent: the caller keeps the event as failed). */
export async function applyProviderPayment(trx: Db, input: ProviderPayment): Promise<ProviderPaymentResult> {
  const invoice = await lockInvoice(trx, input.invoiceId);
  if (!invoice) throw new AppError('invoice_not_found', `Invoice ${input.invoiceId} does not exist`);
  if (invoice.currency !== input.currency) {
    throw new AppError(
      'currency_mismatch',
      `The payment is in ${input.currency} but invoice ${invoice.invoice_number} is in ${invoice.currency}`,
    );
  }
  if (await findPaymentByReference(trx, input.paymentMethod, input.reference)) return { outcome: 'already_recorded' };
  const amount = money(input.amount);
  const open = invoice.status === 'issued' || invoice.status === 'overdue';
  const onInvoice = open ? Money.min(amount, amountDue(invoice)) : money(0);
  const rest = amount.minus(onInvoice);
  let paymentId: string | null = null;
  if (onInvoice.gt(0)) {
    const payment = await recordPayment(
      trx,
      {
        invoiceId: invoice.id,
        amount: onInvoice.toString(),
        paymentMethod: input.paymentMethod,
        providerReference: input.reference,
      },
      SYSTEM_ACTOR,
      { now: input.now },
    );
    paymentId = payment.id;
  }
  let credited: string | null = null;
  if (rest.gt(0)) {
    // Keyed by the provider's payment: a second event carrying the same payment credits nothing.
    const inserted = await trx('provider_credits')
      .insert({
        payment_method: input.paymentMethod,
        provider_reference: input.reference,
        customer_id: invoice.customer_id,
        invoice_id: invoice.id,
        amount: rest.toString(),
        currency: invoice.currency,
      })
      .onConflict(['payment_method', 'provider_reference'])
      .ignore()
      .returning('payment_method');
    if (inserted.length === 0)
      return paymentId ? { outcome: 'recorded', paymentId, credited: null } : { outcome: 'already_recorded' };
    credited = formatMoney(rest, invoice.currency);
    const description =
      `${input.paymentMethod} payment ${input.reference} received for ${invoice.invoice_number} ` +
      `beyond what was due`;
    await addCustomerCredit(
      trx,
      {
        customer_id: invoice.customer_id,
        currency: invoice.currency,
        amount: credited,
        kind: 'credit',
        description,
        invoice_id: invoice.id,
      },
      [],
      input.now,
    );
  }
  return paymentId ? { outcome: 'recorded', paymentId, credited } : { outcome: 'credited', credited: credited! };
}
