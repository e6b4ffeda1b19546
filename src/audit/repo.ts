import type { Knex } from 'knex';
import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';

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

/** The statement that inserts `rows` in the order given, unrun: the caller runs it alone or embeds it in a write. */
export function auditRowsInsert(db: Db, rows: AuditInsert[]): Knex.Raw {
  return db.raw(
    `insert into audit_log (actor, actor_email, action, target_type, target_id, before, after, request_id, ip)
     select v.actor, v.actor_email, v.action, v.target_type, v.target_id, v.before, v.after, v.request_id, v.ip
       from rows from (jsonb_to_recordset(?::jsonb) as (actor text, actor_email text, action text,
            target_type text, target_id text, before jsonb, after jsonb, request_id text, ip text))
            with ordinality as v(actor, actor_email, action, target_type, target_id, before, after, request_id, ip, n)
      order by v.n`,
    [JSON.stringify(rows)],
  );
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
