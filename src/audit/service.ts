import type { Knex } from 'knex';
import type { Db } from '../db/knex.ts';
import type { Page, PageQuery } from '../db/paginate.ts';
import { actorName, type Actor } from '../actor.ts';
import { changedFields, type Fields } from './changes.ts';
import { auditRowsInsert, listAuditRows, type AuditFilters, type AuditInsert, type AuditRow } from './repo.ts';

/** One admin action on one object, as the service that did it describes it (C-11). */
export interface AuditEntry {
  /** `<object>.<verb>`: `customer.update`, `invoice.void`, `license.activation_delete`... */
  action: string;
  targetType: string;
  targetId: string;
  /** The object's fields before the action (null for a create); only the changed ones are stored. */
  before?: Fields | null;
  /** The object's fields after the action (null for a delete). */
  after?: Fields | null;
}

function toRow(actor: Actor, entry: AuditEntry): AuditInsert {
  const { before, after } = changedFields(entry.before ?? null, entry.after ?? null);
  return {
    actor: actorName(actor),
    actor_email: actor.type === 'user' ? actor.email : null,
    action: entry.action,
    target_type: entry.targetType,
    target_id: entry.targetId,
    before,
    after,
    request_id: actor.requestId ?? null,
    ip: actor.ip ?? null,
  };
}

/**
 * Records admin actions by one actor, one or many (a sweep batch records hundreds), in the order given. Call it
 * with the transaction that makes the change, so the rows exist exactly when the change does: a refused or
 * rolled-back action leaves none.
 */
export async function recordAudits(trx: Db, actor: Actor, entries: AuditEntry[]): Promise<void> {
  if (entries.length > 0) await auditStatement(trx, actor, entries);
}

/**
 * The audit rows of `entries` as a statement, unrun, for a write that carries it in its own statement (a `with`
 * clause): where a transaction's round trips missed a bench aim (the customer create) or held a lock longer (the
 * invoice create's number counter); docs/decisions.md, issue 32. Build it on the db or transaction that runs it.
 */
export function auditStatement(db: Db, actor: Actor, entries: AuditEntry[]): Knex.Raw {
  return auditRowsInsert(
    db,
    entries.map((e) => toRow(actor, e)),
  );
}

export function listAuditLog(db: Db, page: PageQuery, filters: AuditFilters): Promise<Page<AuditRow>> {
  return listAuditRows(db, page, filters);
}

/** The newest entries about one object, for its page (C-11). */
export async function auditEntriesOf(db: Db, targetType: string, targetId: string, limit = 20): Promise<AuditRow[]> {
  return (await listAuditRows(db, { limit }, { targetType, targetId })).rows;
}
