import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import {
  createCreditBody,
  createdCreditResponse,
  ledgerEntryResponse,
  listCreditsQuery,
  serialiseCreatedCredit,
  serialiseLedgerEntry,
} from './schema.ts';
import { grantCredit } from '../settlement/service.ts';
import { listCreditLedger } from './service.ts';

const tag = 'Store credits';

export const creditRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/credits',
    auth: 'admin',
    tag,
    summary:
      "Add store credit to a customer; it is spent at once on the customer's open invoices in that currency, oldest " +
      'first',
    body: createCreditBody,
    responses: {
      201: { description: 'Credited', schema: createdCreditResponse },
      400: { description: 'invalid_request, invalid_amount, customer_not_found' },
    },
    errors: ['customer_not_found', 'invalid_amount'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialiseCreatedCredit(await grantCredit(deps.db, body, actor)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/credits',
    auth: 'admin',
    tag,
    summary:
      'List store-credit ledger entries (credits, applications, credit notes) in the order written, with running ' +
      'balances',
    query: listCreditsQuery,
    responses: { 200: { description: 'Ledger entries', schema: z.array(ledgerEntryResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) =>
      listReply(ctx, await listCreditLedger(deps.db, query, query), (row) =>
        serialiseLedgerEntry(row, row.balance_after),
      ),
  }),
];
