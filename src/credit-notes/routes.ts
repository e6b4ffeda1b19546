import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { createCreditNoteBody, creditNoteResponse, listCreditNotesQuery, serialiseCreditNote } from './schema.ts';
import { issueCreditNote } from '../settlement/service.ts';
import { listCreditNotes } from './service.ts';

const tag = 'Credit notes';

export const creditNoteRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/credit-notes',
    auth: 'admin',
    tag,
    summary:
      'Issue a credit note CN-{YEAR}-{SEQ}: lowers the amount due of an unpaid invoice, or adds store credit for ' +
      'a paid one',
    body: createCreditNoteBody,
    responses: {
      201: { description: 'Issued', schema: creditNoteResponse },
      400: {
        description:
          'invalid_request, invalid_amount, invoice_not_found, amount_exceeds_invoice (credit notes above the ' +
          'invoice total)',
      },
      409: { description: 'invoice_not_creditable (draft or void)' },
    },
    errors: ['invoice_not_found', 'invoice_not_creditable', 'amount_exceeds_invoice', 'invalid_amount'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialiseCreditNote(await issueCreditNote(deps.db, body, actor)),
    }),
  }),
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
