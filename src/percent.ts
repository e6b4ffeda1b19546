import { z } from 'zod';

/*
 * Percentages in requests are decimal strings, like money (D-3), and their range is written as the pattern itself,
 * so that the rule is checked exactly (no float: "100.0000000000000000001" is above 100) and the OpenAPI document
 * states it as it is enforced (issue 33). No sign: "-0" is not a percentage anyone means.
 */

/** 0 to 100: a whole part of at most two digits (after leading zeros), or 100 with only zeros after the point. */
const ZERO_TO_HUNDRED = /^0*(\d{1,2}(\.\d+)?|100(\.0+)?)$/;
/** Above 0, at most 100: as above, without the values that are all zeros. */
const ABOVE_ZERO_TO_HUNDRED = /^0*([1-9]\d?(\.\d+)?|100(\.0+)?|0\.\d*[1-9]\d*)$/;

const between = 'must be a decimal string from 0 to 100, such as "8.25"';
const aboveZero = 'must be a decimal string above 0 and at most 100, such as "20"';

/** A tax rate (D-51) or the default tax rate setting: a decimal string from 0 to 100. */
export const percentString = z.string({ error: between }).regex(ZERO_TO_HUNDRED, between);

/** A coupon's percentOff (D-46): above 0, at most 100. */
export const positivePercentString = z.string({ error: aboveZero }).regex(ABOVE_ZERO_TO_HUNDRED, aboveZero);
