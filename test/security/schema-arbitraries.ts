/**
 * fast-check arbitraries generated from the JSON Schema of a route (the one the OpenAPI document shows,
 * made from the same zod schemas): values that fit it, and hostile values against it.
 */
import fc from 'fast-check';
import { STATED_RULES } from '../../src/docs/stated-rules.ts';
import { TEXT_PATTERNS, timestampInput } from '../../src/http/schemas.ts';

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  uniqueItems?: boolean;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  minProperties?: number;
}

/** JSON text spliced in as-is by `serialise` (deep nesting the client could not stringify). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** An object written with these entries in this order, repeated keys included. */
export class JsonEntries {
  constructor(readonly entries: [string, unknown][]) {}
}

export function serialise(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof JsonEntries)
    return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${serialise(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(serialise).join(',')}]`;
  if (value !== null && typeof value === 'object') return serialise(new JsonEntries(Object.entries(value)));
  return JSON.stringify(value) ?? 'null';
}

export const SQL_PAYLOADS = [
  "' OR '1'='1",
  "'; DROP TABLE customers; --",
  '" OR 1=1 --',
  '1; SELECT pg_sleep(10) --',
  "' UNION SELECT password_hash FROM users --",
  '$$; select 1; $$',
  "\\'; --",
  '%_%',
  "E'\\x00'",
  "' || (select current_user) || '",
];

export const SCRIPT_PAYLOADS = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  'javascript:alert(1)',
  '{{7*7}}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent as these very characters
  '${7*7}',
  '<!--#exec cmd="id"-->',
  '../../../../etc/passwd',
  '%0d%0aSet-Cookie: x=y',
  '=cmd|" /C calc"!A0',
];

export const UNICODE_EDGES = [
  '\u0000',
  'nul\u0000inside',
  'ends with nul\u0000',
  '\u0000\u0000',
  '\ud800',
  'lone\udc00low',
  'cut \ud83d',
  '\u202egnp.exe',
  '\ufeffbom',
  'zero\u200bwidth',
  'e\u0301\u0301\u0301',
  '\uffff\ufffe',
  'line\u2028sep',
  'tab\tcr\rlf\n',
  '\u0085\u00a0',
  '😀🏳️‍🌈👩‍👩‍👧',
  'İıß\u1e9e',
  '١٢٣٫٤٥',
  '\u0007\u001b[31m',
];

export const MONEY_EDGES = [
  '1e3',
  '0x10',
  ' 10',
  '10 ',
  '10.',
  '.5',
  '+1',
  '-0',
  '-1',
  '0',
  '1,000.00',
  'NaN',
  'Infinity',
  '9'.repeat(40),
  `0.${'1'.repeat(40)}`,
  '99999999999999999999.99',
  '0.001',
  '١٠',
];
export const INTEGER_EDGES = [
  0,
  -1,
  1.5,
  2 ** 31,
  -(2 ** 31),
  2 ** 53,
  2 ** 63,
  1e21,
  -1e21,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
];
export const ID_EDGES = [
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF',
  '{3b241101-e2bb-4255-8caf-4136c566a962}',
  '3b241101-e2bb-4255-8caf-4136c566a962 ',
  '3b241101e2bb42558caf4136c566a962',
  '1',
  '-1',
  "' OR 1=1 --",
];
/** Years 0 and 10000, typed or reached through the offset (issue 33: year 0 answered a 500). */
export const OUT_OF_RANGE_DATES = [
  '0000-01-01',
  '0000-06-15T10:00:00Z',
  '0001-01-01T00:30:00+01:00',
  '10000-01-01',
  '+010000-01-01T00:00:00Z',
  '9999-12-31T23:00:00-05:00',
];
export const TEMPORAL_EDGES = [
  '2026-02-30',
  ...OUT_OF_RANGE_DATES,
  '0001-01-01',
  '9999-12-31',
  '9999-12-31T23:59:59.999Z',
  '+275760-09-13T00:00:00.000Z',
  '2026-13-01',
  '2026-01-01T25:00:00Z',
  '1970-01-01T00:00:00Z',
  '2026-01-01T00:00:00+14:00',
  'yesterday',
  '2026-1-1',
];
export const CURRENCY_EDGES = ['usd', 'US', 'USDD', 'XXX', 'ZZZ', '123', 'EUR ', 'us$'];

/** Strings a careless service chokes on: SQL and script payloads, unicode edge cases, random text, mixes. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SQL_PAYLOADS, ...SCRIPT_PAYLOADS) },
  { weight: 3, arbitrary: fc.constantFrom(...UNICODE_EDGES) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.string({ maxLength: 8 }),
        fc.constantFrom(...SQL_PAYLOADS, ...SCRIPT_PAYLOADS, ...UNICODE_EDGES),
        fc.string({ maxLength: 8 }),
      )
      .map((p) => p.join('')),
  },
);

/** Long strings that still fit in the 1 MiB body (D-1's 413 is tested separately). */
const hugeText = fc
  .integer({ min: 20_000, max: 900_000 })
  .chain((n) => fc.constantFrom('x', 'é', "'", '\u0000').map((c) => c.repeat(Math.floor(n / Buffer.byteLength(c)))));

/** Arrays or objects nested `depth` deep, written as raw JSON text. */
const deepNesting = fc
  .tuple(fc.integer({ min: 64, max: 20_000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays
      ? new RawJson(`${'['.repeat(depth)}${']'.repeat(depth)}`)
      : new RawJson(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
  );

/** Record keys worth trying: empty, prototype names, NUL, lone surrogates, over-long. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    '__proto__',
    'constructor',
    'prototype',
    'a\u0000b',
    '\u0000',
    'key\u0000',
    '\ud800',
    'k'.repeat(101),
    '$where',
    'a.b',
    '0',
  ),
  hostileText,
);

function typesOf(s: JsonSchema): string[] {
  if (Array.isArray(s.type)) return s.type;
  return s.type ? [s.type] : [];
}

function fitLength(text: fc.Arbitrary<string>, min = 0, max = 64): fc.Arbitrary<string> {
  return text.map((v) => {
    const cut = v.slice(0, max);
    return cut.length >= min ? cut : cut + 'x'.repeat(min - cut.length);
  });
}

export interface ConformingOptions {
  /** Plain alphanumeric text instead of hostile text in free-text fields (for a clean base value). */
  plain?: boolean;
  /** Existing ids to prefer for UUID fields, by field name. */
  idFor?: (field: string) => string | undefined;
  field?: string;
}

/**
 * Whether a string's pattern gives it a format (an amount, a code). The text patterns of D-95 only exclude
 * control characters: a field with one is free text for the generators, plain or hostile.
 */
export const hasFormatPattern = (s: JsonSchema): s is JsonSchema & { pattern: string } =>
  s.pattern !== undefined && !TEXT_PATTERNS.includes(s.pattern);

/** A pattern of decimal amounts (the document's money fields; their exact rule varies: any sign, >= 0, > 0). */
export function isAmountPattern(pattern: string | undefined): boolean {
  return pattern !== undefined && new RegExp(pattern).test('10.00') && !new RegExp(pattern).test('10.00.0');
}

/** Values the schema describes (zod refinements the schema cannot show may still refuse some). */
export function conforming(s: JsonSchema, options: ConformingOptions = {}, depth = 0): fc.Arbitrary<unknown> {
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives?.every((a) => a.required && !a.type && !a.properties))
    return presenceAlternatives(s, alternatives, options, depth);
  if (alternatives) return fc.oneof(...alternatives.map((a) => conforming(a, options, depth)));
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const types = typesOf(s);
  if (types.length > 1) return fc.oneof(...types.map((type) => conforming({ ...s, type }, options, depth)));
  switch (types[0]) {
    case 'string': {
      if (s.format === 'uuid') {
        const existing = options.field ? options.idFor?.(options.field) : undefined;
        return existing
          ? fc.oneof({ weight: 4, arbitrary: fc.constant(existing) }, { weight: 1, arbitrary: fc.uuid({ version: 4 }) })
          : fc.uuid({ version: 4 });
      }
      // Small plain amounts for a clean base (any pattern amounts fit): a random decimal of 30 digits is rarely a
      // sensible price or percentage, and has more decimals than the currency (D-91).
      if (options.plain && isAmountPattern(s.pattern)) return fc.integer({ min: 1, max: 99 }).map((n) => `${n}.00`);
      // A URL or an email also states the no-control-character pattern (D-95): its format says more.
      if (s.format === 'uri') {
        const path = fc.stringMatching(/^[a-z0-9]{0,12}$/);
        return options.plain
          ? path.map((p) => `https://example.test/${p}`)
          : fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), hostileText);
      }
      if (s.format === 'email' || /email/i.test(options.field ?? '')) {
        return options.plain
          ? fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/).map((local) => `${local}@example.test`)
          : fc.oneof(fc.emailAddress(), hostileText);
      }
      if (hasFormatPattern(s))
        return fc
          .stringMatching(new RegExp(s.pattern))
          .filter((v) => v.length >= (s.minLength ?? 0) && v.length <= (s.maxLength ?? Infinity));
      const text = options.plain
        ? fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'), minLength: 1, maxLength: 12 })
        : fc.oneof(hostileText, fc.string());
      return fitLength(text, s.minLength ?? 0, Math.min(s.maxLength ?? 64, 64));
    }
    case 'integer':
      return fc.integer({
        min: Math.max(s.minimum ?? -1_000_000, Number.MIN_SAFE_INTEGER),
        max: Math.min(s.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER),
      });
    case 'number':
      return fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = s.minItems ?? 0;
      // A list whose items must differ (`uniqueItems`, a setting listing features) gets distinct ones.
      if (s.uniqueItems)
        return fc.uniqueArray(conforming(s.items ?? {}, options, depth + 1), {
          minLength,
          maxLength: Math.max(minLength, Math.min(s.maxItems ?? 3, 3)),
          selector: (v) => JSON.stringify(v),
        });
      return fc.array(conforming(s.items ?? {}, options, depth + 1), {
        minLength,
        maxLength: Math.max(minLength, Math.min(s.maxItems ?? 3, 3)),
      });
    }
    case 'object':
      return conformingObject(s, options, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/**
 * An object whose `anyOf`/`oneOf` only say which fields are present (a coupon's percentOff or amountOff with
 * its currency): one alternative's fields are required, and under `oneOf` the other alternatives' are left out.
 */
function presenceAlternatives(
  s: JsonSchema,
  alternatives: JsonSchema[],
  options: ConformingOptions,
  depth: number,
): fc.Arbitrary<unknown> {
  const { anyOf: _any, oneOf: _one, ...object } = s;
  return fc.constantFrom(...alternatives).chain((chosen) => {
    const others = s.oneOf ? alternatives.filter((a) => a !== chosen).flatMap((a) => a.required ?? []) : [];
    const omitted = new Set(others.filter((key) => !chosen.required!.includes(key)));
    const shape = {
      ...object,
      required: [...(s.required ?? []), ...chosen.required!],
      properties: Object.fromEntries(Object.entries(s.properties ?? {}).filter(([k]) => !omitted.has(k))),
    };
    return conformingObject(shape, options, depth);
  });
}

function conformingObject(s: JsonSchema, options: ConformingOptions, depth: number): fc.Arbitrary<unknown> {
  if (depth > 4) return fc.constant({});
  const properties = s.properties ?? {};
  const model = Object.fromEntries(
    Object.entries(properties).map(([k, v]) => [k, conforming(v, { ...options, field: k }, depth + 1)]),
  );
  const record = fc.record(model, {
    requiredKeys: (s.required ?? []).filter((k) => k in properties),
    noNullPrototype: true,
  });
  const known = s.minProperties ? record.filter((v) => Object.keys(v).length >= s.minProperties!) : record;
  if (!s.additionalProperties || typeof s.additionalProperties !== 'object') return known;
  const keys = s.propertyNames
    ? (conforming(s.propertyNames, options, depth + 1) as fc.Arbitrary<string>)
    : fc.string({ minLength: 1, maxLength: 20 });
  const extra = fc.dictionary(keys, conforming(s.additionalProperties, options, depth + 1), {
    maxKeys: 4,
    noNullPrototype: true,
  });
  return fc.tuple(known, extra).map(([k, e]) => ({ ...e, ...(k as object) }));
}

/** Values of the wrong JSON type for `s`, including numbers where decimal strings are required (D-3). */
function wrongType(s: JsonSchema): fc.Arbitrary<unknown> {
  const types = new Set(typesOf(s));
  const candidates: unknown[] = [null, true, false, 0, -1, 1.5, 1e21, '', 'text', [], {}, ['a'], { a: 1 }];
  const wrong = candidates.filter((v) => {
    const t =
      v === null
        ? 'null'
        : Array.isArray(v)
          ? 'array'
          : typeof v === 'number'
            ? Number.isInteger(v)
              ? 'integer'
              : 'number'
            : typeof v === 'object'
              ? 'object'
              : typeof v;
    return !types.has(t) && !(t === 'integer' && types.has('number'));
  });
  const numbersForStrings = types.has('string')
    ? [fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer()]
    : [];
  return fc.oneof(fc.constantFrom(...(wrong.length > 0 ? wrong : candidates)), ...numbersForStrings);
}

/** Near-misses of an http(s) URL: other schemes, relative or scheme-only forms, and a host too long to be one. */
const URI_EDGES = [
  'javascript:alert(1)',
  'ftp://example.test/a',
  '//example.test/a',
  '/relative/path',
  'https://',
  'http://[::1',
  `https://${'a'.repeat(2030)}.test`,
  'https://example.test/\u0000',
];

/** The document's pattern of every timestamp field (one zod schema, stated once: src/docs/stated-rules.ts). */
const TIMESTAMP_PATTERN = STATED_RULES.get(timestampInput)?.pattern;

/** Values at and just past the schema's limits, and near-misses of its formats. */
function boundary(s: JsonSchema): fc.Arbitrary<unknown> {
  const values: unknown[] = [];
  const types = new Set(typesOf(s));
  if (types.has('string')) {
    const { minLength, maxLength } = s;
    if (maxLength !== undefined)
      values.push(
        'x'.repeat(maxLength),
        'x'.repeat(maxLength + 1),
        '😀'.repeat(Math.ceil(maxLength / 2)),
        'é'.repeat(maxLength),
      );
    if (minLength !== undefined && minLength > 0) values.push('x'.repeat(minLength - 1));
    values.push(' ', '   padded   ');
    if (s.pattern === TIMESTAMP_PATTERN) values.push(...TEMPORAL_EDGES);
    else if (s.format === 'uuid') values.push(...ID_EDGES);
    else if (s.format === 'uri') values.push(...URI_EDGES);
    else if (s.pattern?.includes('\\d')) values.push(...MONEY_EDGES);
    else if (!hasFormatPattern(s) && !s.enum) values.push(...TEMPORAL_EDGES, ...CURRENCY_EDGES);
  }
  if (s.enum) {
    for (const v of s.enum.filter((e): e is string => typeof e === 'string'))
      values.push(v.toUpperCase(), `${v} `, `${v}\u0000`, v.slice(0, -1));
  }
  if (types.has('integer') || types.has('number')) {
    values.push(...INTEGER_EDGES);
    if (s.minimum !== undefined) values.push(s.minimum - 1, s.minimum);
    if (s.maximum !== undefined) values.push(s.maximum + 1, s.maximum);
    values.push('1', '1e2', 'NaN');
  }
  if (types.has('array')) {
    values.push(
      [],
      Array.from({ length: (s.maxItems ?? 1000) + 1 }, () => (s.items ? 'x' : 1)),
    );
  }
  if (types.has('object'))
    values.push(
      [],
      'object',
      new JsonEntries([
        ['a', 1],
        ['a', 2],
      ]),
    );
  return values.length > 0 ? fc.constantFrom(...values) : fc.constant(null);
}

/** Hostile replacements for a value that `s` describes. */
export function hostileFor(s: JsonSchema): fc.Arbitrary<unknown> {
  const alternatives = s.anyOf ?? s.oneOf;
  const merged: JsonSchema = alternatives ? { ...alternatives[0], type: alternatives.flatMap(typesOf) } : s;
  return fc.oneof(
    { weight: 3, arbitrary: wrongType(merged) },
    { weight: 4, arbitrary: boundary(merged) },
    { weight: 3, arbitrary: hostileText },
    { weight: 1, arbitrary: hugeText },
    { weight: 1, arbitrary: deepNesting },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
}

/** Whole bodies that are not objects at all. */
export const hostileWholeBody: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    true,
    0,
    'string',
    [],
    [{}],
    new RawJson('{"a":1,}'),
    new RawJson('{"a":'),
    new RawJson(''),
    new RawJson('NaN'),
    new RawJson("{'a':1}"),
  ),
  deepNesting,
  fc.jsonValue({ maxDepth: 4 }),
);

export interface FieldPath {
  path: (string | number)[];
  schema: JsonSchema;
}

/** Every field of an object schema down to `maxDepth`, array items addressed by index 0. */
export function fieldPaths(s: JsonSchema, prefix: (string | number)[] = [], maxDepth = 4): FieldPath[] {
  if (prefix.length >= maxDepth) return [];
  const out: FieldPath[] = [];
  const alternatives = s.anyOf ?? s.oneOf;
  const target = alternatives?.find((a) => typesOf(a).includes('object') || typesOf(a).includes('array')) ?? s;
  for (const [name, child] of Object.entries(target.properties ?? {})) {
    const path = [...prefix, name];
    out.push({ path, schema: child });
    out.push(...fieldPaths(child, path, maxDepth));
  }
  if (typesOf(target).includes('array') && target.items) {
    const path = [...prefix, 0];
    out.push({ path, schema: target.items });
    out.push(...fieldPaths(target.items, path, maxDepth));
  }
  return out;
}

/** The record-like (free-key) objects of a schema, with their value schema. */
export function recordPaths(s: JsonSchema, prefix: (string | number)[] = []): FieldPath[] {
  const out: FieldPath[] = [];
  if (s.additionalProperties && typeof s.additionalProperties === 'object')
    out.push({ path: prefix, schema: s.additionalProperties });
  for (const [name, child] of Object.entries(s.properties ?? {})) {
    for (const alt of child.anyOf ?? [child]) out.push(...recordPaths(alt, [...prefix, name]));
  }
  return out;
}

/** A deep copy of `base` with `value` at `path` (intermediate objects and arrays made as needed). */
export function withValueAt(base: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const array = Array.isArray(base) ? [...base] : [];
    array[head] = withValueAt(array[head], rest, value);
    return array;
  }
  const object =
    base !== null && typeof base === 'object' && !Array.isArray(base) ? (base as Record<string, unknown>) : {};
  // As entries, so a key such as __proto__ is written like any other.
  const entries = Object.entries(object).filter(([k]) => k !== head);
  entries.push([head!, withValueAt(object[head!], rest, value)]);
  return new JsonEntries(entries);
}
