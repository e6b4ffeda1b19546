/**
 * Reading timestamptz values: PostgreSQL sends them as text, and pg's parser (postgres-date) matches every one against
 * a general regular expression. A renewal batch reads thousands (its subscriptions and its invoices as inserted), and
 * that parse was 5% of the lifecycle worker's CPU (issue 32). The form a UTC session sends, `2026-02-16 00:00:00+00`
 * with up to six fraction digits, is read here by position; every other form (another offset, BC, infinity) goes to
 * postgres-date, as before.
 */
import pg from 'pg';

/** pg's own parser for the type (postgres-date), taken before db/knex.ts installs the one below. */
export const generalTimestamptz: (text: string) => unknown = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ);

const digit = (text: string, at: number) => text.charCodeAt(at) - 48;
const number = (text: string, from: number, to: number) => {
  let n = 0;
  for (let i = from; i < to; i += 1) {
    const d = digit(text, i);
    if (d < 0 || d > 9) return Number.NaN;
    n = n * 10 + d;
  }
  return n;
};

/** The instant of a timestamptz's text, as a Date (milliseconds: further fraction digits are cut, as postgres-date). */
export function parseTimestamptz(text: string): unknown {
  const end = text.length - 3;
  if (
    end >= 19 &&
    text.endsWith('+00') &&
    text[4] === '-' &&
    text[7] === '-' &&
    text[10] === ' ' &&
    text[13] === ':' &&
    text[16] === ':' &&
    (end === 19 || (text[19] === '.' && end > 20 && end <= 26))
  ) {
    const fraction = end === 19 ? '' : text.slice(20, end);
    const ms = fraction === '' ? 0 : number(`${fraction}00`, 0, 3);
    const time = Date.UTC(
      number(text, 0, 4),
      number(text, 5, 7) - 1,
      number(text, 8, 10),
      number(text, 11, 13),
      number(text, 14, 16),
      number(text, 17, 19),
      ms,
    );
    // Years before 100 are shifted by Date.UTC (0099 -> 1999): those, and anything malformed, take the general path.
    if (!Number.isNaN(time) && text.charCodeAt(0) !== 48) return new Date(time);
  }
  return generalTimestamptz(text);
}
