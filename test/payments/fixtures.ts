import type { Knex } from 'knex';
import type { TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request, type JsonResponse } from '../helpers/http.ts';
import { line } from '../invoices/fixtures.ts';

export interface Ctx {
  baseUrl: string;
  cookie: string;
  db: Knex;
}

/** The context of a file's tests: `app` with an admin session. */
export async function adminCtx(app: TestApp): Promise<Ctx> {
  const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
  return { baseUrl: app.baseUrl, cookie, db: app.db };
}

/** An invoice through the API (issued unless said otherwise) of one line at `unitPrice`; returns its answer body. */
export async function makeInvoice(
  c: Ctx,
  options: { unitPrice?: string; customerId?: string; currency?: string; status?: 'draft' | 'issued' } = {},
) {
  const customerId = options.customerId ?? (await insertCustomer(c.db)).id;
  const res = await request(c.baseUrl, '/api/billing/invoices', {
    cookie: c.cookie,
    body: {
      customerId,
      lineItems: [line(options.unitPrice ?? '100.00')],
      currency: options.currency ?? 'USD',
      status: options.status ?? 'issued',
    },
  });
  if (res.status !== 201) throw new Error(`setup invoice: ${res.status} ${res.text}`);
  return res.body;
}

export function pay(
  c: Ctx,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  return request(c.baseUrl, '/api/billing/payments', {
    cookie: c.cookie,
    body: { paymentMethod: 'manual', ...body },
    headers,
  });
}

export async function readInvoice(c: Ctx, id: string) {
  return (await request(c.baseUrl, `/api/billing/invoices/${id}`, { cookie: c.cookie })).body;
}

/** Everything a refused money request could have touched: compare before and after. */
export async function snapshot(db: Knex) {
  const count = async (table: string) => Number((await db(table).count<{ n: string }>('* as n').first())!.n);
  return {
    invoices: await db('invoices').orderBy('id').select('*'),
    payments: await db('payments').orderBy('id').select('*'),
    refunds: await count('refunds'),
    creditNotes: await count('credit_notes'),
    ledger: await count('credit_ledger'),
    events: await count('events'),
    counters: await db('document_counters').orderBy(['kind', 'year']).select('*'),
  };
}
