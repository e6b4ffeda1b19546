import type { ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import type { AuditRow } from '../../src/audit/repo.ts';

/** A row of the table as stored (the audit domain's own row type). */
export type AuditLogRow = AuditRow;

/** A mark in the log: the rows written after it are what an action left. */
export async function auditMark(db: Knex): Promise<number> {
  const [row] = await db('audit_log').count<{ n: string }[]>({ n: '*' });
  return Number(row!.n);
}

/** The rows written since `mark`, oldest first. */
export async function auditSince(db: Knex, mark: number): Promise<AuditLogRow[]> {
  return db('audit_log')
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .offset(mark);
}

/** Asserts the action since `mark` left exactly one row, like `expected`, and answers it. */
export async function expectOneAudit(
  t: ExecutionContext,
  db: Knex,
  mark: number,
  expected: Partial<AuditLogRow>,
): Promise<AuditLogRow> {
  const rows = await auditSince(db, mark);
  t.is(rows.length, 1, `one audit row, got ${JSON.stringify(rows.map((r) => r.action))}`);
  t.like(rows[0], expected);
  return rows[0]!;
}

/** Asserts the action since `mark` left no row (refused or rolled back). */
export async function expectNoAudit(t: ExecutionContext, db: Knex, mark: number): Promise<void> {
  t.deepEqual(
    (await auditSince(db, mark)).map((r) => r.action),
    [],
  );
}

/** The whole table as text, for a test that greps it for a secret. */
export async function auditTableText(db: Knex): Promise<string> {
  const { rows } = await db.raw('select audit_log::text as line from audit_log');
  return (rows as { line: string }[]).map((r) => r.line).join('\n');
}
