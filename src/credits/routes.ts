import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { ledgerEntryResponse, listCreditsQuery, serialiseLedgerEntry } from './schema.ts';
import { listCreditLedger } from './service.ts';

const tag = 'Store credits';

export const creditRoutes = [
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
