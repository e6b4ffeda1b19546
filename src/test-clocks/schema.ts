import { z } from 'zod';
import { iso, nameText, pageQuery, timestampInput } from '../http/schemas.ts';
import type { TestClockRow } from './repo.ts';

export const TEST_CLOCK_STATUSES = ['ready', 'advancing', 'failed'] as const;

export const EXAMPLE_TEST_CLOCK_ID = '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';

/** POST /api/billing/test-clocks (TC-1). */
export const createTestClockBody = z
  .object({
    name: nameText(200),
    // timestampInput as it is: the document knows its format by the schema itself.
    frozenTime: timestampInput,
  })
  .meta({ examples: [{ name: 'Monthly plan with a trial', frozenTime: '2026-01-01T00:00:00.000Z' }] });
export type CreateTestClockInput = z.infer<typeof createTestClockBody>;

/** POST /api/billing/test-clocks/:id/advance (TC-3). */
export const advanceTestClockBody = z
  .object({
    /** The new time: after the clock's, at most 2 years after it. */
    frozenTime: timestampInput,
  })
  .meta({
    description: "frozenTime: after the clock's time (else 409 clock_not_advanceable), at most 2 years after it (400)",
    examples: [{ frozenTime: '2026-02-15T00:00:00.000Z' }],
  });
export type AdvanceTestClockInput = z.infer<typeof advanceTestClockBody>;

export const listTestClocksQuery = pageQuery;

export const testClockResponse = z
  .object({
    id: z.uuid(),
    name: z.string(),
    frozenTime: z.string().meta({ description: 'The clock time (ISO 8601); while advancing, the time it left' }),
    status: z.enum(TEST_CLOCK_STATUSES),
    advancingTo: z.string().nullable().meta({ description: 'While advancing: the time it goes to' }),
    deletesAfter: z.string().meta({ description: '30 days after creation the clock and its customers are deleted' }),
    createdAt: z.string(),
  })
  .meta({
    examples: [
      {
        id: EXAMPLE_TEST_CLOCK_ID,
        name: 'Monthly plan with a trial',
        frozenTime: '2026-01-01T00:00:00.000Z',
        status: 'ready',
        advancingTo: null,
        deletesAfter: '2026-12-29T09:00:00.000Z',
        createdAt: '2026-11-29T09:00:00.000Z',
      },
    ],
  });

export function serialiseTestClock(row: TestClockRow): z.infer<typeof testClockResponse> {
  return {
    id: row.id,
    name: row.name,
    frozenTime: iso(row.frozen_time)!,
    status: row.status,
    advancingTo: row.status === 'advancing' ? iso(row.advance_target) : null,
    deletesAfter: iso(row.deletes_after)!,
    createdAt: iso(row.created_at)!,
  };
}
