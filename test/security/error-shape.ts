import type { JsonResponse } from '../helpers/http.ts';

// A stack frame or a PostgreSQL message; plain SQL words are not checked, as answers may echo hostile input.
const LEAK = new RegExp(
  [
    /\bat .+\(.*:\d+:\d+\)|node_modules/.source,
    /duplicate key value|violates .* constraint|syntax error at or near|invalid input syntax for|invalid byte sequence/
      .source,
  ].join('|'),
  'i',
);

/**
 * What is wrong with an error answer, measured against D-1: `{"error": {"code", "message", "details"?}}`,
 * JSON, a snake_case code, details as `{path, message}` entries, no stack or SQL in the text.
 * Empty when the answer is fine.
 */
export function errorShapeProblems(res: JsonResponse): string[] {
  const problems: string[] = [];
  if (!/^application\/json/.test(res.headers.get('content-type') ?? ''))
    problems.push(`content-type ${res.headers.get('content-type')}`);
  const error = (res.body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
  if (!error || typeof error !== 'object') return [...problems, `no error object in ${res.text.slice(0, 200)}`];
  if (typeof error.code !== 'string' || !/^[a-z][a-z0-9_]*$/.test(error.code))
    problems.push(`code ${JSON.stringify(error.code)}`);
  if (typeof error.message !== 'string' || error.message.length === 0)
    problems.push(`message ${JSON.stringify(error.message)}`);
  if (error.details !== undefined) {
    const ok =
      Array.isArray(error.details) &&
      error.details.every((d) => d && typeof d.path === 'string' && typeof d.message === 'string');
    if (!ok) problems.push(`details ${JSON.stringify(error.details).slice(0, 200)}`);
  }
  if (LEAK.test(res.text)) problems.push(`leaks internals: ${res.text.slice(0, 300)}`);
  return problems;
}

/** The `details[].path` entries of an error answer. */
export function detailPaths(res: JsonResponse): string[] {
  const details = (res.body as { error?: { details?: { path: string }[] } })?.error?.details;
  return Array.isArray(details) ? details.map((d) => d.path) : [];
}
