import type { z } from 'zod';

/*
 * One phrasing for what a request got wrong, whatever schema refused it: a predicate a person can act on
 * ("is required", "must be at least 1"), shown beside the field's path in `details` (D-1). zod's own
 * wording ("Invalid input: expected string, received undefined") names its internals, not the fix.
 * Used by the one place requests are parsed (validate.ts `parseOrThrow`), not installed globally: a
 * schema's own message still wins where it gives one, except for a missing field (missingFieldIssue).
 */

/** The message of every missing required field. */
export const REQUIRED = 'is required';

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  date: 'a date',
  null: 'null',
};

const FORMAT_NAMES: Record<string, string> = {
  uuid: 'a UUID',
  guid: 'a UUID',
  email: 'an email address',
  url: 'a URL',
  datetime: 'an ISO 8601 timestamp',
  date: 'a date (YYYY-MM-DD)',
};

const quantity = (origin: string, bound: unknown, noun: string) =>
  origin === 'string'
    ? `${bound} character${bound === 1 ? '' : 's'}`
    : origin === 'array' || origin === 'set'
      ? `${bound} ${noun}${bound === 1 ? '' : 's'}`
      : String(bound);

/**
 * zod's error map for a request: the messages of every issue a schema does not word itself (a missing field:
 * messageOf).
 */
export const requestErrorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'too_small': {
      if (issue.origin === 'string' && issue.minimum === 1) return 'must not be empty';
      const verb =
        issue.origin === 'array' || issue.origin === 'set'
          ? 'must hold at least'
          : issue.inclusive === false
            ? 'must be greater than'
            : 'must be at least';
      return `${verb} ${quantity(issue.origin, issue.minimum, 'item')}`;
    }
    case 'too_big': {
      const verb =
        issue.origin === 'array' || issue.origin === 'set'
          ? 'must hold at most'
          : issue.inclusive === false
            ? 'must be less than'
            : 'must be at most';
      return `${verb} ${quantity(issue.origin, issue.maximum, 'item')}`;
    }
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${String(issue.values[0])}`
        : `must be one of ${issue.values.map(String).join(', ')}`;
    case 'invalid_format':
      return FORMAT_NAMES[issue.format] ? `must be ${FORMAT_NAMES[issue.format]}` : 'is not in the expected format';
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'invalid_union':
      return 'matches none of the accepted forms';
    default:
      return undefined;
  }
};

// The codes zod reports for a field that is absent (any type, an enum or literal, a union of either).
const MISSING_CODES = new Set(['invalid_type', 'invalid_value', 'invalid_union']);

/**
 * An absent required field is worded "is required" even where its schema words its other problems ("must be
 * an email address" is the wrong fix for an email left out). Needs the issue's input (`reportInput`); issues parsed
 * without it keep their message.
 */
export function messageOf(issue: z.core.$ZodIssue): string {
  const missing = 'input' in issue && issue.input === undefined && MISSING_CODES.has(issue.code);
  return missing ? REQUIRED : issue.message;
}
