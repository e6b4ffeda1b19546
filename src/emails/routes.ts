import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import {
  emailResponse,
  emailSummaryResponse,
  listEmailsQuery,
  serialiseEmail,
  serialiseEmailSummary,
} from './schema.ts';
import { getEmail, listEmails, resendEmail } from './service.ts';

const tag = 'Emails';

export const emailRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/emails',
    auth: 'admin',
    tag,
    summary: 'Emails sent, captured, queued, failed or skipped (M-5), newest first; filter by customer, type, status',
    query: listEmailsQuery,
    responses: { 200: { description: 'Emails', schema: z.array(emailSummaryResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) => {
      const { customerId, type, status, ...page } = query;
      const found = await listEmails(deps.db, { ...page, newestFirst: true }, { customerId, type, status });
      return listReply(ctx, found, (row) => serialiseEmailSummary(row, deps.config));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/emails/:id',
    auth: 'admin',
    tag,
    summary: 'One email with its text and HTML parts, recipient, attempts and last error',
    params: idParams,
    responses: { 200: { description: 'Email', schema: emailResponse }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params }) => ({ body: serialiseEmail(await getEmail(deps.db, params.id), deps.config) }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/emails/:id/resend',
    auth: 'admin',
    tag,
    summary: 'Send the email again: a new email with the same content and recipient, queued now (audited)',
    params: idParams,
    responses: { 201: { description: 'The new email', schema: emailResponse }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params, actor }) => ({
      status: 201,
      body: serialiseEmail(await resendEmail(deps.db, params.id, actor), deps.config),
    }),
  }),
];
