import type { AuditRow } from '../../audit/repo.ts';
import { dateTime } from './format.ts';
import { knownWords } from './labels.ts';
import { Table } from './Table.tsx';

/**
 * A changed field's value as one short line: the words of a value the console knows (`bank_transfer` reads
 * "Bank transfer", `true` "Yes", issue 34), other strings as they are, anything else as JSON.
 */
function shown(value: unknown): string {
  if (value === null || value === undefined) return '(none)';
  return knownWords(value) ?? (typeof value === 'string' ? value : JSON.stringify(value));
}

/** The changed fields of an entry, one `field: before → after` line each. */
export function Changes({ row }: { row: AuditRow }) {
  const fields = [...new Set([...Object.keys(row.before ?? {}), ...Object.keys(row.after ?? {})])];
  if (fields.length === 0) return <span class="muted">no field changed</span>;
  return (
    <ul class="changes">
      {fields.map((field) => (
        <li>
          <code>{field}</code>: {row.before ? <del>{shown(row.before[field])}</del> : null}
          {row.before && row.after ? ' → ' : null}
          {row.after ? <ins>{shown(row.after[field])}</ins> : null}
        </li>
      ))}
    </ul>
  );
}

/** Who: the admin's email, `system`, or the API key; broken only where it must (never "syste m"). */
export const actorLabel = (row: AuditRow) => <span class="actor">{row.actor_email ?? row.actor}</span>;

/** C-11: an object page's audit entries, newest first, with a link to the whole log of the object. */
export function AuditTrail({ rows, targetType, targetId }: { rows: AuditRow[]; targetType: string; targetId: string }) {
  const all = `/admin/audit-log?${new URLSearchParams({ targetType, targetId })}`;
  return (
    <section aria-labelledby="audit-heading">
      <h2 id="audit-heading">Audit log</h2>
      <Table
        rows={rows}
        stack
        empty="No admin action recorded on this yet."
        columns={[
          { header: 'When', cell: (r) => dateTime(r.created_at) },
          { header: 'Who', cell: actorLabel },
          { header: 'Action', cell: (r) => <code class="action">{r.action}</code> },
          { header: 'Changes', cell: (r) => <Changes row={r} /> },
        ]}
      />
      <p>
        <a href={all}>Full audit log of this {targetType}</a>
      </p>
    </section>
  );
}
