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
  return quoted(json.replaceAll('?', '\\u003f'));
}

/**
 * pg.escapeLiteral, whose character-by-character loop was a measurable share of an invoice creation's CPU and
 * garbage (issue 20): a text without a quote or a backslash is what pg would answer, the text between two quotes;
 * any other goes to pg.
 */
export function quoted(value: string): string {
  return value.includes("'") || value.includes('\\') ? pg.escapeLiteral(value) : `'${value}'`;
}

/** A fixed text (a channel name, a placeholder token) as an SQL literal; one holding `?` is refused. */
export function textLiteral(value: string): string {
  if (value.includes('?')) throw new Error('a text literal may not hold "?": knex would read it as a placeholder');
  return quoted(value);
}

/** An integer as SQL. */
export function integerLiteral(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
  return String(value);
}

/**
 * A statement with its values apart from its text: `text` holds `$1::type .. $n::type` where the literals of `values`
 * go. Its text is the same from one call to the next, so a connection can prepare it once and execute it with the
 * values (db/hot-lock.ts aloneHotLock: no parse and plan per call), or the values are written into it (`inlined`).
 */
export interface LiteralStatement {
  text: string;
  /** SQL literals (this module's), one per `$n` in order. */
  values: string[];
}

/** Collects the values of a LiteralStatement while its text is built. */
export class LiteralValues {
  readonly values: string[] = [];

  /** `literal` (SQL written by this module) as the next parameter, of SQL type `type`: answers where it goes. */
  add(literal: string, type: string): string {
    this.values.push(literal);
    return `$${this.values.length}::${type}`;
  }
}

/** The statement with its literals written in (for a query that cannot execute a prepared statement). */
export function inlined(statement: LiteralStatement): string {
  // Only add() writes `$n::` into a text (its fixed SQL holds no `$`); a function replacer reads no `$` in the literals.
  return statement.text.replace(/\$(\d+)::/g, (_, n: string) => `${statement.values[Number(n) - 1]!}::`);
}
