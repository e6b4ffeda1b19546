/** PostgreSQL error classes the domains turn into coded answers. */
const code = (error: unknown) => (error as { code?: string } | null)?.code;

/**
 * A row references a missing one, or a delete is refused by a referencing row (NO ACTION: 23503, RESTRICT: 23001);
 * `constraint` narrows it to one key.
 */
export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  return (
    (code(error) === '23503' || code(error) === '23001') &&
    (constraint === undefined || (error as { constraint?: string }).constraint === constraint)
  );
}

/** A unique index refused the row; `constraint` narrows it to one index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  return (
    code(error) === '23505' &&
    (constraint === undefined || (error as { constraint?: string }).constraint === constraint)
  );
}
