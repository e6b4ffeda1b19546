/**
 * One value breaking each rule a published JSON Schema states (type, format, pattern, lengths, bounds, enum,
 * items, required, additionalProperties, and the presence alternatives of anyOf/oneOf), for the conformance
 * test: the document calls each of them invalid, so the service must refuse it as the document says.
 */
import fc from 'fast-check';
import { conforming, fieldPaths, type JsonSchema } from './schema-arbitraries.ts';

/** A field left out of its object. */
export const OMIT = Symbol('omit');

export interface Violation {
  /** The rule broken, for the failure message. */
  rule: string;
  /** Where the value goes; the answer's details must name it unless `objectLevel`. */
  path: (string | number)[];
  value: unknown;
  /** A rule about a whole object (which fields are present together): no one field to name. */
  objectLevel?: boolean;
}

/** A field name no schema has. */
export const UNKNOWN_FIELD = 'unknownFieldX';

/** Strings that miss common patterns: a control character, a space, signs, too many dots, letters. */
const PATTERN_MISSES = ['not valid!', '\u0007', '-1', '0', '1.2.3', '101', 'é', 'x', '1'];
const FORMAT_MISSES: Record<string, string> = { uuid: 'not-a-uuid', email: 'not-an-email', uri: 'no scheme' };

/** Values of other JSON types, the most telling first (a number where a decimal string is due, D-3). */
const OTHER_TYPES: Record<string, unknown[]> = {
  string: [12345, true, null, {}, []],
  number: ['12', true, null, {}],
  integer: [1.5, '12', true, null],
  boolean: ['true', 1, null],
  array: [{}, 'x', null],
  // null first: a body of null was once read as no body (issue 33).
  object: [null, [], 'x'],
};

function typesOf(s: JsonSchema): string[] {
  if (Array.isArray(s.type)) return s.type;
  return s.type ? [s.type] : [];
}

/** Alternatives that only say which fields are present (a coupon's percentOff or amountOff with currency). */
const presenceOnly = (alts: JsonSchema[] | undefined) =>
  alts !== undefined && alts.length > 0 && alts.every((a) => a.required && !a.type && !a.properties);

/** A value `schema` accepts, for filling an array past its maxItems or a present-together field. */
function sample(schema: JsonSchema): unknown {
  return fc.sample(conforming(schema, { plain: true }), { numRuns: 1, seed: 33 })[0];
}

function valueAt(base: unknown, path: (string | number)[]): unknown {
  return path.reduce<unknown>(
    (v, key) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined),
    base,
  );
}

/** The rules of one schema (not its fields'), each broken once; `current` is the value there now. */
function ownViolations(s: JsonSchema, current: unknown, path: (string | number)[]): Violation[] {
  const out: Violation[] = [];
  const add = (rule: string, value: unknown, objectLevel = false) => out.push({ rule, path, value, objectLevel });
  const alternatives = s.anyOf ?? s.oneOf;
  const typed = alternatives && !presenceOnly(alternatives) ? alternatives : [s];
  const types = typed.flatMap(typesOf);
  const wrong = types.length > 0 ? OTHER_TYPES[types[0]!]!.find((v) => !types.includes(jsonTypeOf(v))) : undefined;
  if (wrong !== undefined) add(`type ${types.join('|')}`, wrong);
  for (const alt of typed) {
    const altTypes = typesOf(alt);
    if (altTypes.includes('string')) {
      if (alt.minLength) add(`minLength ${alt.minLength}`, 'x'.repeat(alt.minLength - 1));
      if (alt.maxLength !== undefined) add(`maxLength ${alt.maxLength}`, 'x'.repeat(alt.maxLength + 1));
      const patterns = [alt.pattern, ...(alt.allOf ?? []).map((a) => a.pattern)];
      for (const pattern of patterns.filter((p): p is string => p !== undefined)) {
        const miss = PATTERN_MISSES.find((v) => !new RegExp(pattern).test(v));
        if (miss !== undefined) add(`pattern ${pattern}`, miss);
      }
      if (alt.format && FORMAT_MISSES[alt.format]) add(`format ${alt.format}`, FORMAT_MISSES[alt.format]);
    }
    if (alt.enum) add('enum', typeof alt.enum[0] === 'string' ? 'not-one-of-these' : 987654321);
    if (altTypes.includes('integer') || altTypes.includes('number')) {
      if (alt.minimum !== undefined) add(`minimum ${alt.minimum}`, alt.minimum - 1);
      if (alt.maximum !== undefined) add(`maximum ${alt.maximum}`, alt.maximum + 1);
    }
    if (altTypes.includes('array')) {
      if (alt.minItems)
        add(`minItems ${alt.minItems}`, Array.isArray(current) ? current.slice(0, alt.minItems - 1) : []);
      if (alt.maxItems !== undefined) {
        const item = Array.isArray(current) && current.length > 0 ? current[0] : sample(alt.items ?? {});
        add(
          `maxItems ${alt.maxItems}`,
          Array.from({ length: alt.maxItems + 1 }, () => item),
        );
      }
    }
  }
  const object = current !== null && typeof current === 'object' && !Array.isArray(current) ? current : undefined;
  const shape = typed.find((a) => typesOf(a).includes('object') && a.properties) ?? s;
  if (object && shape.properties) {
    const fields = object as Record<string, unknown>;
    if (shape.additionalProperties === false)
      out.push({ rule: 'additionalProperties false', path: [...path, UNKNOWN_FIELD], value: 1 });
    for (const key of shape.required ?? [])
      if (Object.hasOwn(fields, key)) out.push({ rule: 'required', path: [...path, key], value: OMIT });
    if (shape.minProperties) add(`minProperties ${shape.minProperties}`, {}, true);
    const presence = presenceOnly(s.anyOf) ? s.anyOf : presenceOnly(s.oneOf) ? s.oneOf : undefined;
    if (presence) {
      const keys = [...new Set(presence.flatMap((a) => a.required!))];
      add(
        `${s.oneOf ? 'oneOf' : 'anyOf'}: none`,
        Object.fromEntries(Object.entries(fields).filter(([k]) => !keys.includes(k))),
        true,
      );
      if (s.oneOf) {
        const all = Object.fromEntries(keys.map((k) => [k, fields[k] ?? sample(shape.properties?.[k] ?? {})]));
        add('oneOf: all', { ...fields, ...all }, true);
      }
    }
  }
  return out;
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** One value breaking each rule of the schema and of each of its fields (down to fieldPaths's depth). */
export function violations(schema: JsonSchema, base: unknown): Violation[] {
  const fields = [{ path: [] as (string | number)[], schema }, ...fieldPaths(schema)];
  return fields.flatMap((f) => ownViolations(f.schema, valueAt(base, f.path), f.path));
}
