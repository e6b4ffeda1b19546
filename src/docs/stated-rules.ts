/**
 * Rules the service checks in code (a refinement, a pipe) that z.toJSONSchema cannot see, said in JSON
 * Schema so that the document states them too (issue 19; test/docs/document-driven.test.ts sends what the
 * document calls valid and fails on a refusal it did not announce). Keyed by the shared zod schema that
 * holds the rule, so each rule is said once for every field that uses it; a rule that lives on one
 * schema only is said in that schema's own `.meta()`.
 */
import type { z } from 'zod';
import { timestampInput } from '../http/schemas.ts';
import { positiveMoneyString } from '../money-input.ts';
import { currencyCode, ISO_4217_CODES, nonNegativeMoneyString } from '../money.ts';

// Days the calendar has in every year from 1 to 9999 (29 February, which only leap years have, is said in words).
// The year is four digits but 0000, written by the place of its last non-zero digit.
const YEAR = '([0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)';
const LONG_MONTHS = '(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])';
const SHORT_MONTHS = '(0[469]|11)-(0[1-9]|[12][0-9]|30)';
const FEBRUARY = '02-(0[1-9]|1[0-9]|2[0-8])';
const DATE = `${YEAR}-(${LONG_MONTHS}|${SHORT_MONTHS}|${FEBRUARY})`;
const TIME = `([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,6})?)?`;
const OFFSET = `(Z|[+-]([01][0-9]|2[0-3]):?[0-5][0-9])`;

export const STATED_RULES = new Map<z.ZodType, Record<string, unknown>>([
  [
    currencyCode,
    { enum: ISO_4217_CODES, description: 'ISO 4217 currency code, such as USD (lower case is upper-cased)' },
  ],
  [
    timestampInput,
    {
      pattern: `^${DATE}(T${TIME}${OFFSET})?$`,
      description:
        'ISO 8601 timestamp with its offset, or YYYY-MM-DD (midnight UTC), on a day the calendar has (29 February ' +
        'in leap years too), from 0001-01-01 to 9999-12-31 in UTC',
    },
  ],
  [
    nonNegativeMoneyString,
    {
      pattern: '^[0-9]+(\\.[0-9]+)?$',
      description: 'decimal string, not negative, with no more decimals than the currency has',
    },
  ],
  [
    positiveMoneyString,
    {
      pattern: '^([0-9]*[1-9][0-9]*(\\.[0-9]+)?|[0-9]+\\.[0-9]*[1-9][0-9]*)$',
      description: 'decimal string greater than 0, with no more decimals than the currency has',
    },
  ],
]);
