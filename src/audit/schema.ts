import { z } from 'zod';
import { iso, nameText, pagingQuery } from '../http/schemas.ts';
import type { AuditRow } from './repo.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

export const listAuditLogQuery = pagingQuery().extend({
  actor: nameText(320).optional(),
  targetType: z
    .string()
    .regex(/^[a-z_]{1,40}$/, 'must be an object type such as customer or invoice')
    .optional(),
  targetId: nameText(200).optional(),
  action: z
    .string()
    .regex(/^[a-z_]{1,40}\.[a-z_]{1,40}$/, 'must be an action such as invoice.void')
    .optional(),
});

export const auditEntryResponse = z
  .object({
    id: z.string(),
    actor: z.string().meta({ description: 'A user id, `api_key:<id>` or `system`' }),
    actorEmail: z.string().nullable(),
    action: z.string(),
    targetType: z.string(),
    targetId: z.string(),
    before: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({ description: 'The changed fields before the action; null for a create' }),
    after: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({ description: 'The changed fields after the action; null for a delete' }),
    requestId: z.string().nullable(),
    ip: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({
    examples: [
      {
        id: '1b2c3d4e-5f60-4718-a9b0-c1d2e3f40516',
        actor: 'f3162738-94a5-4b6c-937e-8f9001122334',
        actorEmail: 'admin@acme.example',
        action: 'invoice.update',
        targetType: 'invoice',
        targetId: EXAMPLE_ID.invoice,
        before: { status: 'draft' },
        after: { status: 'issued' },
        requestId: 'req_7f3a2c9e',
        ip: '203.0.113.7',
        createdAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

export function serialiseAuditEntry(row: AuditRow): z.infer<typeof auditEntryResponse> {
  return {
    id: row.id,
    actor: row.actor,
    actorEmail: row.actor_email,
    action: row.action,
    targetType: row.target_type,
    targetId: row.target_id,
    before: row.before,
    after: row.after,
    requestId: row.request_id,
    ip: row.ip,
    createdAt: iso(row.created_at)!,
  };
}
