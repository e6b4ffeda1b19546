import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { creditNoteResponse, listCreditNotesQuery, serialiseCreditNote } from './schema.ts';
import { listCreditNotes } from './service.ts';

const tag = 'Credit notes';

export const creditNoteRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/billing/credit-notes',
    auth: 'admin',
    tag,
    summary: 'List credit notes in creation order, optionally of one invoice or customer',
    query: listCreditNotesQuery,
    responses: { 200: { description: 'Credit notes', schema: z.array(creditNoteResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) =>
      listReply(ctx, await listCreditNotes(deps.db, query, query), serialiseCreditNote),
  }),
];
