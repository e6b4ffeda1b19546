import type { Db } from '../db/knex.ts';
import type { Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';
import { actorName, type Actor } from './actor.ts';
import { changedFields, type Fields } from './changes.ts';
import {
  auditInsertSql,
  insertAuditRows,
  listAuditRows,
  type AuditFilters,
  type AuditInsert,
  type AuditRow,
} from './repo.ts';

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
    // A session's user is written by the statement that checks it (auditInsertPart), not from here.
    actor: actor.type === 'session' ? '' : actorName(actor),
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
 * Records an admin action. Call it with the transaction that makes the change, so the row exists exactly
 * when the change does: a refused or rolled-back action leaves none.
 */
export function recordAudit(trx: Db, actor: Actor, entry: AuditEntry): Promise<void> {
  return recordAudits(trx, actor, [entry]);
}

/** Many entries by one actor in one statement (a sweep batch). */
export function recordAudits(trx: Db, actor: Actor, entries: AuditEntry[]): Promise<void> {
  actorName(actor); // a session's user cannot be named here
  return insertAuditRows(
    trx,
    entries.map((e) => toRow(actor, e)),
  );
}

/**
 * Audit rows as a part of another statement: an insert reading its rows from one parameter, and that parameter's value.
 */
export interface AuditPart {
  text: string;
  value: string;
}

/**
 * `recordAudits` as a part of the statement that makes the change (a CTE of a single-statement create), so
 * the row and the change commit together in one round trip. `param` is the parameter that carries the rows
 * (`$9`); the caller runs `text` as a CTE and passes `value` there. An actor of type `session` needs
 * `sessionUser`: SQL of the id and email of the user whose session that statement checks (db/fast-query.ts
 * StatementGuard), written as the row's actor.
 */
export function auditInsertPart(
  actor: Actor,
  entries: AuditEntry[],
  param: string,
  sessionUser?: { id: string; email: string },
): AuditPart {
  if (actor.type === 'session' && !sessionUser)
    throw new Error("an audit row of a session's user needs the statement that checks the session");
  const value = JSON.stringify(entries.map((e) => toRow(actor, e)));
  return {
    text: auditInsertSql(
      param,
      actor.type === 'session' ? { actor: sessionUser!.id, email: sessionUser!.email } : undefined,
    ),
    value,
  };
}

export function listAuditLog(db: Db, page: PageQuery, filters: AuditFilters): Promise<Page<AuditRow>> {
  return listAuditRows(db, page, filters);
}

/** The newest entries about one object, for its page (C-11). */
export async function auditEntriesOf(db: Db, targetType: string, targetId: string, limit = 20): Promise<AuditRow[]> {
  return (await listAuditRows(db, { limit }, { targetType, targetId })).rows;
}
