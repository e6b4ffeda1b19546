import type { Db } from '../db/knex.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';

export interface AuditRow {
  id: string;
  actor: string;
  actor_email: string | null;
  action: string;
  target_type: string;
  target_id: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  request_id: string | null;
  ip: string | null;
  created_at: Date;
}

export type AuditInsert = Omit<AuditRow, 'id' | 'created_at'>;

export interface AuditFilters {
  /** A user id, a user's email, `api_key:<id>` or `system`. */
  actor?: string;
  targetType?: string;
  targetId?: string;
  action?: string;
}

/**
 * The insert of the audit rows held by the jsonb parameter `param` (`?` for knex, `$n` for pg), in the order
 * given: a statement of its own, or a CTE of another domain's statement (service.ts auditInsertPart). `actorSql`
 * (SQL of the actor and its email) replaces the rows' own actor columns.
 */
export function auditInsertSql(param: string, actorSql?: { actor: string; email: string }): string {
  return `insert into audit_log (actor, actor_email, action, target_type, target_id, before, after, request_id, ip)
     select ${actorSql ? `${actorSql.actor}, ${actorSql.email}` : 'v.actor, v.actor_email'},
            v.action, v.target_type, v.target_id, v.before, v.after, v.request_id, v.ip
       from rows from (jsonb_to_recordset(${param}::jsonb) as (actor text, actor_email text, action text,
            target_type text, target_id text, before jsonb, after jsonb, request_id text, ip text))
            with ordinality as v(actor, actor_email, action, target_type, target_id, before, after, request_id, ip, n)
      order by v.n`;
}

/** Rows in the order given, in one statement (a sweep batch records all its changes at once). */
export async function insertAuditRows(db: Db, rows: AuditInsert[]): Promise<void> {
  if (rows.length === 0) return;
  await db.raw(auditInsertSql('?'), [JSON.stringify(rows)]);
}

export function listAuditRows(db: Db, page: PageQuery, filters: AuditFilters): Promise<Page<AuditRow>> {
  const query = db('audit_log').select('*');
  if (filters.actor) {
    const actor = filters.actor;
    query.where((w) => void w.where('actor', actor).orWhereRaw('lower(actor_email) = lower(?)', [actor]));
  }
  if (filters.targetType) query.where('target_type', filters.targetType);
  if (filters.targetId) query.where('target_id', filters.targetId);
  if (filters.action) query.where('action', filters.action);
  return paginate<AuditRow>(query, 'audit_log', { ...page, newestFirst: true });
}
