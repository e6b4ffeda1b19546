import { z } from 'zod';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import { freeText, iso, nameText, pageQuery } from '../http/schemas.ts';
import type { MetricRow } from './repo.ts';

import { AGGREGATIONS, type Aggregation } from './aggregations.ts';

export { AGGREGATIONS, type Aggregation };

export const METRIC_CODE_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

const metricCode = z
  .string()
  .regex(METRIC_CODE_PATTERN, 'must start with a lower-case letter, then up to 63 lower-case letters, digits or _');
const aggregation = z.enum(AGGREGATIONS, { error: `must be one of ${AGGREGATIONS.join(', ')}` });
/** The event property a metric reads (U-1). */
const field = nameText(100).meta({
  description: 'The event property read: required for every aggregation but count, refused for count',
});

const METRIC_EXAMPLE = {
  code: 'api_calls',
  name: 'API calls',
  description: 'Requests to the public API',
  aggregation: 'count' as const,
};

export const createMetricBody = z
  .object({
    code: metricCode,
    name: nameText(200),
    description: freeText(1000).optional(),
    aggregation,
    field: field.optional(),
  })
  .meta({ examples: [METRIC_EXAMPLE, { code: 'storage_gb', name: 'Storage', aggregation: 'max', field: 'gb' }] });
export type CreateMetricInput = z.infer<typeof createMetricBody>;

/** Name and description always; aggregation and field only while no charge uses the metric (U-2). */
export const updateMetricBody = z
  .object({
    name: nameText(200).optional(),
    description: freeText(1000).nullable().optional(),
    aggregation: aggregation.optional(),
    field: field.nullable().optional(),
  })
  .meta({ examples: [{ name: 'API requests', description: 'Every request to api.acme.example' }] });
export type UpdateMetricInput = z.infer<typeof updateMetricBody>;

export const listMetricsQuery = pageQuery;

export const metricResponse = z
  .object({
    id: z.uuid(),
    code: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    aggregation,
    field: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({
    examples: [
      {
        id: EXAMPLE_ID.metric,
        ...METRIC_EXAMPLE,
        field: null,
        createdAt: '2026-01-05T09:30:00.000Z',
        updatedAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

export function serialiseMetric(row: MetricRow) {
  return {
    id: row.id,
    code: row.code,
    name: row.name,
    description: row.description,
    aggregation: row.aggregation,
    field: row.field,
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}
