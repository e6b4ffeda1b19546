/**
 * Rows for a statement's JSON with their timestamps as ISO text, each distinct instant formatted once. A batch's rows
 * repeat a few instants (its `now`, its due date, its periods' bounds), and `Date#toJSON` per field was most of the
 * cost of serialising them (issue 20: 2.5 -> 0.7 ms per 500 invoice rows). Same JSON as JSON.stringify of the rows.
 */
export function datesAsText<T extends object>(
  rows: readonly T[],
): { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] }[] {
  const texts = new Map<number, string>();
  const text = (date: Date) => {
    const time = date.getTime();
    let iso = texts.get(time);
    if (iso === undefined) {
      iso = date.toISOString();
      texts.set(time, iso);
    }
    return iso;
  };
  return rows.map((row) => {
    const out: Record<string, unknown> = {};
    // for-in over a row's own fields (rows are plain objects): no [key, value] array per field (0.78 against 1.24 ms
    // per 500 invoice rows).
    for (const key in row) {
      const value = (row as Record<string, unknown>)[key];
      out[key] = value instanceof Date ? text(value) : value;
    }
    return out as never;
  });
}
