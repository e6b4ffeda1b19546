import type { z } from 'zod';
import { AppError, FIELDS_REFUSED, type ErrorCode, type ErrorDetail } from '../errors.ts';
import { LOOKUP_TEXT } from './schemas.ts';
import { messageOf, requestErrorMap } from './messages.ts';
import { unknownFieldPaths } from './unknown-fields.ts';

/** `body` fields are named bare (`lineItems.0.amount`), others with their place (`query.limit`). */
const joinPath = (prefix: string, path: PropertyKey[]) => [prefix, ...path.map(String)].filter(Boolean).join('.');

export function issuesToDetails(error: z.ZodError, prefix: string): ErrorDetail[] {
  // zod still runs a schema's checks on a value of the wrong type (a string against an array's `max`: "at most 4
  // characters"); a field of the wrong type is told only that.
  const mistyped = new Set(error.issues.filter((i) => i.code === 'invalid_type').map((i) => joinPath('', i.path)));
  return error.issues
    .filter((issue) => issue.code === 'invalid_type' || !mistyped.has(joinPath('', issue.path)))
    .map((issue) => ({ path: joinPath(prefix, issue.path), message: messageOf(issue) }));
}

const UNSTORABLE_TEXT = 'must not contain NUL characters or unpaired UTF-16 surrogates';

// NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Text PostgreSQL cannot store as sent: a NUL, or an unpaired UTF-16 surrogate. */
export const isUnstorable = (text: string) => UNSTORABLE.test(text);

/** A visited node keeps its parent and key; a path is spelled out only for what is found. */
interface Node {
  value: unknown;
  parent: Node | undefined;
  key: string | number | undefined;
}

function pathOf(node: Node | undefined, key?: string): (string | number)[] {
  const path: (string | number)[] = key === undefined ? [] : [key];
  for (let n = node; n?.parent; n = n.parent) path.unshift(n.key!);
  return path;
}

/**
 * Where `value` holds text PostgreSQL cannot store as sent: text and jsonb refuse U+0000 (a 500 if it got
 * that far), and an unpaired surrogate would silently become U+FFFD. Walks keys and strings without
 * recursion, so a deeply nested value cannot exhaust the stack.
 */
export function unstorableTextPaths(value: unknown): (string | number)[][] {
  const found: (string | number)[][] = [];
  const stack: Node[] = [{ value, parent: undefined, key: undefined }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const current = node.value;
    if (typeof current === 'string') {
      if (isUnstorable(current)) found.push(pathOf(node));
    } else if (Array.isArray(current)) {
      for (const [i, item] of current.entries()) stack.push({ value: item, parent: node, key: i });
    } else if (current !== null && typeof current === 'object' && !(current instanceof Date)) {
      for (const [key, item] of Object.entries(current)) {
        if (isUnstorable(key)) found.push(pathOf(node, key));
        stack.push({ value: item, parent: node, key });
      }
    }
  }
  return found;
}

// Per schema, read once: a field's meta() is a lookup in zod's global registry.
const lookupTextCache = new WeakMap<z.ZodType, Set<string>>();

/** The top-level fields of an object schema marked with `lookupText` (src/http/schemas.ts). */
function lookupTextFields(schema: z.ZodType): Set<string> {
  let fields = lookupTextCache.get(schema);
  if (!fields) {
    const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape ?? {};
    fields = new Set(Object.keys(shape).filter((key) => shape[key]!.meta()?.[LOOKUP_TEXT] === true));
    lookupTextCache.set(schema, fields);
  }
  return fields;
}

const UNKNOWN_FIELD = 'unknown field';

/**
 * Parses `value` or throws one AppError listing every problem: each field the schema does not name
 * (D-90; path params name only what the route's path holds, so they are not walked), then what zod refused.
 * The error's code is `code`, or `unknownCode` when unknown fields are all there is.
 */
/** A refusal's message in the words of the person who typed it (issue 34: not "Invalid body"), then each field. */
const REFUSED_PART = {
  body: FIELDS_REFUSED,
  query: 'Some query parameters need correcting',
  params: 'The address names something that cannot exist',
} as const;

export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: 'body' | 'query' | 'params',
  code: ErrorCode = 'invalid_request',
  unknownCode: ErrorCode = code,
): z.output<S> {
  const prefix = where === 'body' ? '' : where;
  const unknown = where === 'params' ? [] : unknownFieldPaths(schema, value);
  const details: ErrorDetail[] = unknown.map((path) => ({ path: joinPath(prefix, path), message: UNKNOWN_FIELD }));
  // The input is kept on each issue only to tell a missing field (messages.ts); it is never answered.
  const result = schema.safeParse(value, { error: requestErrorMap, reportInput: true });
  if (result.success) {
    const lookupOnly = lookupTextFields(schema);
    const unstorable = unstorableTextPaths(result.data).filter((path) => !lookupOnly.has(String(path[0])));
    details.push(...unstorable.map((path) => ({ path: joinPath(prefix, path), message: UNSTORABLE_TEXT })));
    if (details.length === 0) return result.data;
  } else {
    details.push(...issuesToDetails(result.error, prefix));
  }
  const summary = details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ');
  const onlyUnknown = details.length === unknown.length;
  throw new AppError(onlyUnknown ? unknownCode : code, `${REFUSED_PART[where]}: ${summary}`, { details });
}
