import { z } from 'zod';

/** Ids are UUIDs; a malformed id in a path is a 404 (D-1), in a body a 400. */
export const uuid = z.uuid({ error: 'must be a UUID' });

export const idParams = z.object({ id: uuid });

/** Metadata key of `lookupText` (it also shows in the OpenAPI document). */
export const LOOKUP_TEXT = 'x-lookup-text';

/**
 * Marks a top-level field whose text the domain only looks up after reducing it to a safe form (a license
 * key checked against its pattern, search words), so any text is accepted, including the NUL characters
 * and unpaired surrogates that other fields refuse (src/http/validate.ts).
 */
export function lookupText<S extends z.ZodType>(schema: S): S {
  return schema.meta({ [LOOKUP_TEXT]: true }) as S;
}

/*
 * D-95: text a person or a program identifies something by (names, emails, codes, keys, ids) holds no
 * C0 or C1 control character (U+0000-U+001F, U+007F-U+009F): a bell, an escape sequence or a line break
 * in a name reaches terminals, logs, CSV exports and PDFs. Free text (descriptions, reasons, addresses,
 * notes) keeps its layout: tab and newline, and CRLF, which is how a browser form sends a newline.
 * Written as patterns, without the `u` flag, so the OpenAPI document states them as they are enforced.
 */
const PLAIN_PATTERN = /^[^\u0000-\u001f\u007f-\u009f]*$/;
const FREE_PATTERN = /^(?:[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]|\r\n)*$/;
/** The sources of both patterns, as the OpenAPI document shows them (tests generate plain text for them). */
export const TEXT_PATTERNS: readonly string[] = [PLAIN_PATTERN.source, FREE_PATTERN.source];
const PLAIN_MESSAGE = 'must not contain control characters';
const FREE_MESSAGE = 'must not contain control characters other than tab and newline';

const atMost = (max: number) => `must be at most ${max} characters`;

/** `text` refusing every control character: for keys and values that are not trimmed (feature keys, secrets, URLs). */
export const withoutControls = (text: z.ZodString) => text.regex(PLAIN_PATTERN, PLAIN_MESSAGE);

// The patterns are checked before trimming: a name sent with a trailing newline is refused, not trimmed into shape.

/** Identifying text, possibly empty (an optional field's "" clears it): no control character, then trimmed. */
export const plainText = (max: number) => withoutControls(z.string()).trim().max(max, atMost(max));

/** A name, code, key or identifier that must be given: plainText, not empty. */
export const nameText = (max: number) => plainText(max).min(1, 'must not be empty');

/** Free text (descriptions, reasons, addresses, notes): trimmed; tab and newline are its only control characters. */
export const freeText = (max: number) => z.string().regex(FREE_PATTERN, FREE_MESSAGE).trim().max(max, atMost(max));

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(?:Z|[+-](\d{2}):?(\d{2})))?$/;

/**
 * Whether `v` is a timestamp that exists: the calendar's day (no 30 February, which Date.parse would move to
 * 2 March), an hour, minute and second on the clock, an offset within a day. Nothing is moved silently (D-91).
 */
function isRealTimestamp(v: string): boolean {
  const m = TIMESTAMP.exec(v);
  if (!m) return false;
  const [year, month, day, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] = m
    .slice(1)
    .map((part) => (part === undefined ? undefined : Number(part)));
  // setUTCFullYear: Date.UTC would read years 0-99 as 1900-1999.
  const daysInMonth = new Date(new Date(0).setUTCFullYear(year!, month!, 0)).getUTCDate();
  return (
    month! >= 1 &&
    month! <= 12 &&
    day! >= 1 &&
    day! <= daysInMonth &&
    hour! <= 23 &&
    minute! <= 59 &&
    second! <= 59 &&
    offsetHours! <= 23 &&
    offsetMinutes! <= 59
  );
}

const instantOf = (v: string) => new Date(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v);

/**
 * Issue 33: the years a timestamp may name and fall in (UTC). PostgreSQL has no year 0 (it answered a 500), and
 * no due date or expiry is meant for year 10000; both ends are checked on the text and on the instant, which an
 * offset can move across a year.
 */
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');
function isWithinYears(v: string): boolean {
  const time = instantOf(v).getTime();
  return !v.startsWith('0000') && time >= FIRST_INSTANT && time <= LAST_INSTANT;
}

/**
 * Timestamps in requests: a full ISO 8601 timestamp or `YYYY-MM-DD` (D-4), a day the calendar has, within years 1
 * to 9999. The one date schema of the API, the console's forms and the command line.
 */
export const timestampInput = z
  .string()
  .refine((v) => isRealTimestamp(v) && !Number.isNaN(Date.parse(v)), {
    message: 'must be an ISO 8601 timestamp or YYYY-MM-DD',
    abort: true,
  })
  .refine(isWithinYears, { message: 'must be between 0001-01-01 and 9999-12-31 (UTC)' })
  .transform(instantOf);

/** D-5 paging: `limit` (default 100, max 500) and `startingAfter` (the last id of the previous page). */
export function pagingQuery(id: z.ZodType<string> = uuid) {
  return z.object({
    limit: z.coerce.number().int().min(1).max(500).default(100),
    startingAfter: id.optional(),
  });
}
/** Parses into db/paginate.ts `PageQuery`; the API lists in creation order (D-5). */
export const pageQuery = pagingQuery();

/** ISO 8601 UTC with milliseconds and Z (D-4). */
export function iso(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
