import pg from 'pg';

/**
 * Values written into SQL text, for a statement sent with its COMMIT in one simple-protocol query (db/hot-lock.ts
 * `finish`), which takes no bind parameters. Quoting is pg's own (`escapeLiteral`: quotes doubled, an E'' string
 * with backslashes doubled when there are any), never ours. No `?` is ever written: knex reads every `?` of a
 * raw statement as a placeholder, even inside a string literal (hot-lock.ts refuses a statement holding one).
 */

/** JSON as a text literal for `::jsonb`: `?` is written as the JSON escape `\u003f`, which jsonb reads back as `?`. */
export function jsonLiteral(value: unknown): string {
  return jsonTextLiteral(JSON.stringify(value));
}

/** JSON text already serialised (an audit part's rows) as a text literal for `::jsonb`, as jsonLiteral. */
export function jsonTextLiteral(json: string): string {
  return pg.escapeLiteral(json.replaceAll('?', '\\u003f'));
}

/** A fixed text (a channel name, a placeholder token) as an SQL literal; one holding `?` is refused. */
export function textLiteral(value: string): string {
  if (value.includes('?')) throw new Error('a text literal may not hold "?": knex would read it as a placeholder');
  return pg.escapeLiteral(value);
}

/** An integer as SQL. */
export function integerLiteral(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
  return String(value);
}
