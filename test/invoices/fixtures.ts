import type { Knex } from 'knex';
import { insertCustomer } from '../helpers/factories.ts';
import { request, type JsonResponse } from '../helpers/http.ts';

export const line = (unitPrice: string, quantity = 1, description = 'Widget') => ({ description, quantity, unitPrice });

/** POSTs an invoice for a new customer (or the given one) and returns the answer. */
export async function postInvoice(
  baseUrl: string,
  cookie: string,
  db: Knex,
  body: Record<string, unknown> = {},
): Promise<JsonResponse> {
  const customerId = (body.customerId as string | undefined) ?? (await insertCustomer(db)).id;
  return request(baseUrl, '/api/billing/invoices', {
    cookie,
    body: { customerId, lineItems: [line('10.00')], ...body },
  });
}
