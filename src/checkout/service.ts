/**
 * Hosted checkout (D-61): a provider page where the customer pays an issued or overdue invoice's amount
 * due. The provider is called outside any transaction (it can take 10 s); the session is recorded after.
 * The payment itself arrives later as the provider's signed webhook (src/provider-events). An admin's
 * session is an admin action (C-11): its audit row commits with the session's record.
 */
import type { Config } from '../config.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { AppError } from '../errors.ts';
import { amountDue } from '../pricing/amount-due.ts';
import type { InvoiceRow } from '../invoices/repo.ts';
import { findInvoice } from '../invoices/service.ts';
import { formatMoney } from '../money.ts';
import { ProviderCallError } from '../providers/call.ts';
import { createProviderACheckout } from '../providers/provider-a.ts';
import { createProviderBInvoice } from '../providers/provider-b.ts';
import { assertProviderConfigured } from '../providers/configured.ts';
import { randomUUID } from 'node:crypto';

export type CheckoutProvider = 'provider_a' | 'provider_b';

export interface CheckoutRequest {
  invoiceId: string;
  successUrl: string;
  cancelUrl?: string;
}

export interface CheckoutSession {
  provider: CheckoutProvider;
  id: string;
  url: string;
  invoiceId: string;
}

async function payableInvoice(db: Db, invoiceId: string): Promise<{ invoice: InvoiceRow; due: string }> {
  const invoice = await findInvoice(db, invoiceId);
  if (!invoice)
    throw new AppError('invoice_not_found', `Invoice ${invoiceId} does not exist`, {
      details: [{ path: 'invoiceId', message: 'no such invoice' }],
    });
  const due = amountDue(invoice);
  if ((invoice.status !== 'issued' && invoice.status !== 'overdue') || !due.gt(0)) {
    throw new AppError(
      'invoice_not_payable',
      `Invoice ${invoice.invoice_number} is ${invoice.status} with ${formatMoney(due, invoice.currency)} due: ` +
        `nothing to pay by checkout`,
    );
  }
  return { invoice, due: formatMoney(due, invoice.currency) };
}

/**
 * Creates the provider's checkout for the invoice's amount due; provider failures answer 502 provider_error, an unset
 * secret 503.
 */
export async function startCheckout(
  db: Db,
  config: Config,
  provider: CheckoutProvider,
  request: CheckoutRequest,
  actor: Actor,
  options: { timeoutMs?: number } = {},
): Promise<CheckoutSession> {
  assertProviderConfigured(config, provider, 'api');
  const { invoice, due } = await payableInvoice(db, request.invoiceId);
  const common = {
    invoiceId: invoice.id,
    invoiceNumber: invoice.invoice_number,
    amount: due,
    currency: invoice.currency,
    successUrl: request.successUrl,
    idempotencyKey: `checkout_${randomUUID()}`,
  };
  let session: { id: string; url: string };
  try {
    session =
      provider === 'provider_a'
        ? await createProviderACheckout(
            config,
            { ...common, cancelUrl: request.cancelUrl ?? request.successUrl },
            options,
          )
        : await createProviderBInvoice(config, common, options);
  } catch (error) {
    if (error instanceof ProviderCallError) throw new AppError('provider_error', error.message);
    throw error;
  }
  await inTransaction(db, async (trx) => {
    await trx('checkout_sessions')
      .insert({
        provider,
        provider_session_id: session.id,
        invoice_id: invoice.id,
        amount: due,
        currency: invoice.currency,
        url: session.url,
      })
      .onConflict(['provider', 'provider_session_id'])
      .ignore();
    // The session's page URL is the customer's way to pay: not recorded, only which session it was.
    await recordAudits(trx, actor, [
      {
        action: 'checkout.create',
        targetType: 'invoice',
        targetId: invoice.id,
        after: { provider, session_id: session.id, amount: due, currency: invoice.currency },
      },
    ]);
  });
  return { provider, id: session.id, url: session.url, invoiceId: invoice.id };
}
