import { request, type JsonResponse } from '../helpers/http.ts';
import { makeInvoice, pay, type Ctx } from '../payments/fixtures.ts';

/** A payment through the API on a fresh issued invoice of `amount` (paid in full unless `invoiceTotal` is larger). */
export async function makePayment(
  c: Ctx,
  options: {
    amount?: string;
    invoiceTotal?: string;
    paymentMethod?: string;
    providerReference?: string | null;
    currency?: string;
  } = {},
) {
  const amount = options.amount ?? '100.00';
  const invoice = await makeInvoice(c, { unitPrice: options.invoiceTotal ?? amount, currency: options.currency });
  const res = await pay(c, {
    invoiceId: invoice.id,
    amount,
    paymentMethod: options.paymentMethod ?? 'manual',
    providerReference: options.providerReference ?? null,
  });
  if (res.status !== 201) throw new Error(`setup payment: ${res.status} ${res.text}`);
  return { invoice, payment: res.body };
}

export function refund(
  c: Ctx,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  // The reason C-14 requires, unless the test names its own.
  const withReason = { reason: 'Goodwill', ...body };
  return request(c.baseUrl, '/api/billing/refunds', { cookie: c.cookie, body: withReason, headers });
}

export async function readPayment(c: Ctx, id: string) {
  return (await request(c.baseUrl, `/api/billing/payments/${id}`, { cookie: c.cookie })).body;
}
