import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { auditEntryResponse, listAuditLogQuery, serialiseAuditEntry } from './schema.ts';
import { listAuditLog } from './service.ts';

export const auditRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/audit-log',
    auth: 'admin',
    tag: 'Audit log',
    summary:
      'Who did what to which object (C-11), newest first; filter by actor (user id, email, api_key:<id>, system), ' +
      'target or action',
    query: listAuditLogQuery,
    responses: { 200: { description: 'Audit entries', schema: z.array(auditEntryResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) => {
      const { actor, targetType, targetId, action, ...page } = query;
      return listReply(
        ctx,
        await listAuditLog(deps.db, { ...page, newestFirst: true }, { actor, targetType, targetId, action }),
        serialiseAuditEntry,
      );
    },
  }),
];
