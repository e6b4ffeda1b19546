import type { z } from 'zod';
import { AppError, type ErrorCode, type ErrorDetail } from './errors.ts';

export function issuesToDetails(error: z.ZodError, prefix: string): ErrorDetail[] {
  return error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter(Boolean).join('.'),
    message: issue.message,
  }));
}

/** Parses `value` or throws one AppError listing every problem. */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: 'body' | 'query' | 'params',
  code: ErrorCode = 'invalid_request',
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = issuesToDetails(result.error, where === 'body' ? '' : where);
  const summary = details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ');
  throw new AppError(code, `Invalid ${where}: ${summary}`, { details });
}
