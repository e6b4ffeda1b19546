/**
 * provider_b's API (D-60): JSON `POST /v2/invoices` creating a provider invoice the customer pays on
 * the provider's page. Authenticated with HTTP Basic, the secret key as the user name and no password
 * (how invoice-style providers commonly take their key).
 */
import type { Config } from '../config.ts';
import { callProvider, ProviderCallError, stringField } from './call.ts';

export type ProviderBConfig = Pick<Config, 'PROVIDER_B_API_URL' | 'PROVIDER_B_SECRET_KEY'>;

export interface ProviderBInvoiceInput {
  invoiceId: string;
  invoiceNumber: string;
  amount: string;
  currency: string;
  successUrl: string;
  idempotencyKey: string;
}

export async function createProviderBInvoice(
  config: ProviderBConfig,
  input: ProviderBInvoiceInput,
  options: { timeoutMs?: number } = {},
): Promise<{ id: string; url: string }> {
  if (!config.PROVIDER_B_SECRET_KEY)
    throw new ProviderCallError('provider_b is not configured (PROVIDER_B_SECRET_KEY is not set)', { definite: true });
  const { answer } = await callProvider({
    provider: 'provider_b',
    what: 'invoice',
    url: `${config.PROVIDER_B_API_URL.replace(/\/+$/, '')}/v2/invoices`,
    headers: {
      Authorization: `Basic ${Buffer.from(`${config.PROVIDER_B_SECRET_KEY}:`).toString('base64')}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': input.idempotencyKey,
    },
    body: JSON.stringify({
      external_id: input.invoiceId,
      amount: input.amount,
      currency: input.currency,
      description: `Invoice ${input.invoiceNumber}`,
      success_redirect_url: input.successUrl,
    }),
    timeoutMs: options.timeoutMs,
  });
  const id = stringField(answer, 'id');
  const url = stringField(answer, 'invoice_url');
  if (!id || !url)
    throw new ProviderCallError('provider_b answered without an invoice id and url', { definite: false });
  return { id, url };
}
