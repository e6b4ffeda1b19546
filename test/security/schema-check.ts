/**
 * What the published JSON Schema says of a value: the paths (joined with dots) where it breaks a rule, empty
 * when the document calls it valid. Only the keywords the OpenAPI document uses (test/docs/conformance.test.ts
 * fails on any other, so a new one cannot be silently ignored). Patterns are read without the `u` flag, as the
 * service reads them (src/http/schemas.ts).
 */
import type { JsonSchema } from './schema-arbitraries.ts';

/** Keywords that state no rule on the value. */
const ANNOTATIONS = new Set(['description', 'examples', 'default', 'x-lookup-text', 'title']);

/** Keywords schemaProblems checks. */
export const CHECKED_KEYWORDS = new Set([
  'type',
  'enum',
  'const',
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
  'minProperties',
  'anyOf',
  'oneOf',
  'allOf',
]);

/** The keywords of `schema` (at any depth) that neither state a checked rule nor annotate. */
export function uncheckedKeywords(schema: JsonSchema): string[] {
  const found = new Set<string>();
  const walk = (s: JsonSchema) => {
    for (const [key, value] of Object.entries(s)) {
      if (!CHECKED_KEYWORDS.has(key) && !ANNOTATIONS.has(key)) found.add(key);
      if (key === 'properties') Object.values(value as Record<string, JsonSchema>).forEach(walk);
      else if (key === 'anyOf' || key === 'oneOf' || key === 'allOf') (value as JsonSchema[]).forEach(walk);
      else if (['items', 'additionalProperties', 'propertyNames'].includes(key) && typeof value === 'object')
        walk(value as JsonSchema);
    }
  };
  walk(schema);
  return [...found];
}

const FORMATS: Record<string, (v: string) => boolean> = {
  uuid: (v) => /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(v),
  email: (v) => /^[^\s@]+@[^\s@]+$/.test(v),
  uri: (v) => {
    try {
      new URL(v);
      return true;
    } catch {
      return false;
    }
  },
};

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function hasType(value: unknown, type: string): boolean {
  if (type === 'integer') return Number.isInteger(value);
  return jsonType(value) === type;
}

const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));

/** The paths where `value` breaks `schema`; a value that breaks no rule gives []. */
export function schemaProblems(schema: JsonSchema, value: unknown, path = ''): string[] {
  const problems: string[] = [];
  const s = schema;
  if (s.anyOf && !s.anyOf.some((alt) => schemaProblems(alt, value, path).length === 0)) problems.push(path);
  if (s.oneOf && s.oneOf.filter((alt) => schemaProblems(alt, value, path).length === 0).length !== 1)
    problems.push(path);
  for (const alt of s.allOf ?? []) problems.push(...schemaProblems(alt, value, path));
  if (s.const !== undefined && JSON.stringify(s.const) !== JSON.stringify(value)) problems.push(path);
  if (s.enum && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) problems.push(path);
  const types = s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
  if (types.length > 0 && !types.some((t) => hasType(value, t))) return [...problems, path];
  if (typeof value === 'string') {
    if (s.minLength !== undefined && value.length < s.minLength) problems.push(path);
    if (s.maxLength !== undefined && value.length > s.maxLength) problems.push(path);
    if (s.pattern !== undefined && !new RegExp(s.pattern).test(value)) problems.push(path);
    if (s.format !== undefined && FORMATS[s.format] && !FORMATS[s.format]!(value)) problems.push(path);
  }
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum) problems.push(path);
    if (s.maximum !== undefined && value > s.maximum) problems.push(path);
  }
  if (Array.isArray(value)) {
    if (s.minItems !== undefined && value.length < s.minItems) problems.push(path);
    if (s.maxItems !== undefined && value.length > s.maxItems) problems.push(path);
    if (s.uniqueItems && new Set(value.map((item) => JSON.stringify(item))).size !== value.length) problems.push(path);
    for (const [i, item] of s.items ? value.entries() : [])
      problems.push(...schemaProblems(s.items!, item, join(path, i)));
  }
  if (jsonType(value) === 'object') {
    const object = value as Record<string, unknown>;
    for (const key of s.required ?? []) if (!Object.hasOwn(object, key)) problems.push(join(path, key));
    if (s.minProperties !== undefined && Object.keys(object).length < s.minProperties) problems.push(path);
    for (const [key, item] of Object.entries(object)) {
      const known = s.properties && Object.hasOwn(s.properties, key) ? s.properties[key] : undefined;
      if (s.propertyNames) problems.push(...schemaProblems(s.propertyNames, key, path).map(() => join(path, key)));
      if (known) problems.push(...schemaProblems(known, item, join(path, key)));
      else if (s.additionalProperties === false) problems.push(join(path, key));
      else if (typeof s.additionalProperties === 'object')
        problems.push(...schemaProblems(s.additionalProperties, item, join(path, key)));
    }
  }
  return problems;
}
