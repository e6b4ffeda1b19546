import { createHash } from 'node:crypto';
import type { RawConnection } from './fast-query.ts';
import { inlined, type LiteralStatement } from './literal.ts';

/**
 * The statements the hot-lock transactions (db/hot-lock.ts) keep prepared on each pooled connection: PostgreSQL
 * parses and plans a big numbering statement once per connection, not per call. A statement's name is the hash of
 * its text, so a changed text is never run by an old plan; the names held are read back from the server when a
 * query failed (a pooler's other session, DISCARD ALL).
 */

/** Names of the statements prepared on each pooled connection (a new connection starts with none). */
const prepared = new WeakMap<RawConnection, Set<string>>();
const PREFIX = 'billing_hot_';
/** Beyond this many texts on one connection, statements run inlined (each text is few, this is a guard). */
const MOST_PREPARED = 32;

export function preparedOn(connection: RawConnection): Set<string> {
  let names = prepared.get(connection);
  if (!names) prepared.set(connection, (names = new Set()));
  return names;
}

const nameOfText = new Map<string, string>();
export function statementName(statement: LiteralStatement): string {
  let name = nameOfText.get(statement.text);
  if (!name) {
    name = PREFIX + createHash('sha256').update(statement.text).digest('hex').slice(0, 32);
    if (nameOfText.size < 1000) nameOfText.set(statement.text, name);
  }
  return name;
}

/** The statement as the query runs it: an EXECUTE of its prepared text (with the PREPARE when the connection lacks it), or the text itself. */
export function executable(
  connection: RawConnection,
  statement: string | LiteralStatement,
): { prepare: string[]; sql: string } {
  if (typeof statement === 'string') return { prepare: [], sql: statement };
  const names = preparedOn(connection);
  const name = statementName(statement);
  if (!names.has(name) && names.size >= MOST_PREPARED) return { prepare: [], sql: inlined(statement) };
  const execute = `EXECUTE ${name}(${statement.values.join(', ')})`;
  return { prepare: names.has(name) ? [] : [`PREPARE ${name} AS ${statement.text}`], sql: execute };
}

export async function rereadPrepared(connection: RawConnection): Promise<void> {
  const names = preparedOn(connection);
  names.clear();
  const result = await connection
    .query({ text: `select name from pg_prepared_statements where starts_with(name, $1)`, values: [PREFIX] })
    .catch(() => undefined);
  for (const row of result?.rows ?? []) names.add(row.name as string);
}
