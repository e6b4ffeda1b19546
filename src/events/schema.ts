import { z } from 'zod';
import { iso, pageQuery } from '../http/schemas.ts';
import type { EventRow } from './repo.ts';
import { EVENT_TYPES } from './types.ts';

export const listEventsQuery = pageQuery.extend({ type: z.enum(EVENT_TYPES).optional() });

export const eventResponse = z.object({
  id: z.string(),
  type: z.string(),
  createdAt: z.string(),
  data: z.record(z.string(), z.unknown()),
});

/** The event envelope of interface.md: id, type, createdAt, data. */
export function serialiseEvent(row: EventRow) {
  return { id: row.id, type: row.type, createdAt: iso(row.created_at)!, data: row.data };
}
