/** How a billable metric aggregates its events (U-1). */
export const AGGREGATIONS = ['count', 'sum', 'max', 'unique_count', 'latest'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];
