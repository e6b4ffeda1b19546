import type { z } from 'zod';

/*
 * D-90: a field the schema does not name is refused rather than dropped (Stripe refuses unknown parameters),
 * so a typo or a read-only field such as `monthlyRevenue` is never accepted silently. The schemas stay
 * ordinary (stripping) zod objects, shared with the console and the OpenAPI document; this walk compares the
 * request's keys with their shapes, in the one place requests are parsed (validate.ts `parseOrThrow`).
 */

type Path = (string | number)[];

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  items?: z.ZodType[];
  rest?: z.ZodType | null;
  options?: z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
  valueType?: z.ZodType;
  getter?: () => z.ZodType;
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;
const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const key = (path: Path) => path.join('\u0000');

/** The paths the intersection of `lists` share (a field is unknown only if no alternative names it). */
function shared(lists: Path[][]): Path[] {
  const [first, ...rest] = lists;
  if (!first) return [];
  const others = rest.map((list) => new Set(list.map(key)));
  return first.filter((path) => others.every((set) => set.has(key(path))));
}

/**
 * The paths in `value` of object keys that `schema` does not name. Keys whose value is undefined are not
 * counted: JSON cannot carry them, and the console builds its bodies with optional fields left undefined.
 */
export function unknownFieldPaths(schema: z.ZodType, value: unknown, path: Path = [], depth = 0): Path[] {
  // Hostile input may nest deeply; past any real schema's depth there is nothing left to compare.
  if (depth > 64) return [];
  const def = defOf(schema);
  switch (def.type) {
    case 'object': {
      if (!isRecord(value)) return [];
      const open = def.catchall !== undefined && defOf(def.catchall).type !== 'never';
      const found: Path[] = [];
      for (const [name, item] of Object.entries(value)) {
        if (item === undefined) continue;
        const field = Object.hasOwn(def.shape!, name) ? def.shape![name] : undefined;
        if (field) found.push(...unknownFieldPaths(field, item, [...path, name], depth + 1));
        else if (open) found.push(...unknownFieldPaths(def.catchall!, item, [...path, name], depth + 1));
        else found.push([...path, name]);
      }
      return found;
    }
    case 'record':
      return isRecord(value)
        ? Object.entries(value).flatMap(([name, item]) =>
            unknownFieldPaths(def.valueType!, item, [...path, name], depth + 1),
          )
        : [];
    case 'array':
      return Array.isArray(value)
        ? value.flatMap((item, i) => unknownFieldPaths(def.element!, item, [...path, i], depth + 1))
        : [];
    case 'tuple':
      return Array.isArray(value)
        ? value.flatMap((item, i) => {
            const itemSchema = def.items![i] ?? def.rest;
            return itemSchema ? unknownFieldPaths(itemSchema, item, [...path, i], depth + 1) : [];
          })
        : [];
    case 'union': {
      // The alternative the value matches decides; when none matches, a key no alternative names is unknown.
      const matching = def.options!.find((option) => option.safeParse(value).success);
      if (matching) return unknownFieldPaths(matching, value, path, depth + 1);
      return shared(def.options!.map((option) => unknownFieldPaths(option, value, path, depth + 1)));
    }
    case 'intersection':
      return shared([
        unknownFieldPaths(def.left!, value, path, depth + 1),
        unknownFieldPaths(def.right!, value, path, depth + 1),
      ]);
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      return unknownFieldPaths(def.innerType!, value, path, depth + 1);
    case 'pipe':
      // The request's shape is the pipe's input side; a transform's output is the service's business.
      return unknownFieldPaths(def.in!, value, path, depth + 1);
    case 'lazy':
      return unknownFieldPaths(def.getter!(), value, path, depth + 1);
    default:
      return [];
  }
}
