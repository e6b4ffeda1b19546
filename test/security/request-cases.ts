/** Hostile requests built from a route's published schemas: bodies, query strings and path segments. */
import fc from 'fast-check';
import {
  conforming,
  fieldPaths,
  hostileFor,
  hostileKey,
  hostileText,
  hostileWholeBody,
  ID_EDGES,
  INTEGER_EDGES,
  JsonEntries,
  recordPaths,
  TEMPORAL_EDGES,
  withValueAt,
  type JsonSchema,
} from './schema-arbitraries.ts';
import { encodePathSegment } from './world.ts';

export interface BodyCase {
  label: string;
  value: unknown;
}

/**
 * Bodies around a clean `base`: one field made hostile (or given another fitting value), the whole body
 * replaced, an unknown field, a repeated key, a hostile key in a free-key object.
 */
export function bodyCases(
  schema: JsonSchema,
  base: unknown,
  idFor: (field: string) => string | undefined,
): fc.Arbitrary<BodyCase> {
  const fields = fieldPaths(schema);
  const topLevel = fields.filter((f) => f.path.length === 1);
  const cases: fc.WeightedArbitrary<BodyCase>[] = [
    { weight: 1, arbitrary: hostileWholeBody.map((value) => ({ label: 'whole body', value })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(hostileKey, fc.jsonValue({ maxDepth: 2 }))
        .map(([k, v]) => ({ label: `unknown field ${JSON.stringify(k)}`, value: withValueAt(base, [k], v) })),
    },
  ];
  if (fields.length > 0) {
    const field = fc.constantFrom(...fields);
    cases.push(
      {
        weight: 8,
        arbitrary: field.chain((f) =>
          hostileFor(f.schema).map((v) => ({
            label: `hostile ${f.path.join('.')}`,
            value: withValueAt(base, f.path, v),
          })),
        ),
      },
      {
        weight: 3,
        arbitrary: field.chain((f) =>
          conforming(f.schema, { idFor, field: String(f.path.at(-1)) }).map((v) => ({
            label: `fitting ${f.path.join('.')}`,
            value: withValueAt(base, f.path, v),
          })),
        ),
      },
    );
  }
  if (topLevel.length > 0 && base !== null && typeof base === 'object') {
    // Duplicate keys: JSON.parse keeps the last, and so must the answer.
    cases.push({
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...topLevel), fc.boolean())
        .chain(([f, hostileLast]) => hostileFor(f.schema).map((h) => ({ f, h, hostileLast })))
        .map(({ f, h, hostileLast }) => {
          const key = String(f.path[0]);
          const clean = (base as Record<string, unknown>)[key] ?? null;
          const rest = Object.entries(base as Record<string, unknown>).filter(([k]) => k !== key);
          return {
            label: `duplicate ${key}`,
            value: new JsonEntries([...rest, [key, hostileLast ? clean : h], [key, hostileLast ? h : clean]]),
          };
        }),
    });
  }
  for (const r of recordPaths(schema)) {
    cases.push({
      weight: 2,
      arbitrary: fc.tuple(hostileKey, conforming(r.schema)).map(([k, v]) => ({
        label: `record key in ${r.path.join('.') || 'body'}`,
        value: withValueAt(base, [...r.path, k], v),
      })),
    });
  }
  return fc.oneof(...cases);
}

const hostileQueryValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: hostileText },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      ...INTEGER_EDGES.map(String),
      '1.5',
      '1e2',
      'NaN',
      '-0',
      ...ID_EDGES,
      ...TEMPORAL_EDGES,
      'true',
      'TRUE',
      '[]',
      '{}',
    ),
  },
  // Long, but inside Node's 16 KiB header limit (past it the server answers 431 before the app sees anything).
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 6_000 }).map((n) => 'q'.repeat(n)) },
);

export interface QueryCase {
  label: string;
  qs: string;
}

/**
 * Query strings around a clean `base`: a hostile or repeated parameter, another fitting value, an unknown parameter.
 */
export function queryCases(schema: JsonSchema, base: Record<string, string>): fc.Arbitrary<QueryCase> {
  const names = Object.keys(schema.properties ?? {});
  const encode = (entries: [string, string][]) =>
    entries.map(([k, v]) => `${encodePathSegment(k)}=${encodePathSegment(v)}`).join('&');
  const baseEntries = Object.entries(base);
  const without = (name: string) => baseEntries.filter(([k]) => k !== name);
  const cases: fc.WeightedArbitrary<QueryCase>[] = [
    {
      weight: 1,
      arbitrary: fc
        .tuple(hostileKey, hostileQueryValue)
        .map(([k, v]) => ({ label: `unknown parameter ${JSON.stringify(k)}`, qs: encode([...baseEntries, [k, v]]) })),
    },
  ];
  if (names.length > 0) {
    const name = fc.constantFrom(...names);
    cases.push(
      {
        weight: 6,
        arbitrary: fc
          .tuple(name, hostileQueryValue)
          .map(([n, v]) => ({ label: `hostile ${n}`, qs: encode([...without(n), [n, v]]) })),
      },
      {
        weight: 2,
        arbitrary: fc.tuple(name, fc.array(hostileQueryValue, { minLength: 2, maxLength: 3 })).map(([n, vs]) => ({
          label: `repeated ${n}`,
          qs: encode([...without(n), ...vs.map((v): [string, string] => [n, v])]),
        })),
      },
      {
        weight: 2,
        arbitrary: name.chain((n) =>
          conforming(schema.properties![n]!).map((v) => ({
            label: `fitting ${n}`,
            qs: encode([...without(n), [n, typeof v === 'string' ? v : JSON.stringify(v)]]),
          })),
        ),
      },
    );
  }
  return fc.oneof(...cases);
}

/** Hostile path segments (before encoding). */
export const hostileSegment: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 4, arbitrary: hostileText },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...ID_EDGES, '%', '%00', '..%2f', 'a/b', '?x=1', '#frag', ';jsessionid=1'),
    },
    { weight: 1, arbitrary: fc.integer({ min: 101, max: 4_000 }).map((n) => 'k'.repeat(n)) },
    { weight: 1, arbitrary: fc.uuid() },
  )
  // An empty, "." or ".." segment addresses another route (the URL is normalised), not this one.
  .filter((s) => s !== '' && s !== '.' && s !== '..');
