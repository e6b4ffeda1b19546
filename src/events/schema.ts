import { z } from 'zod';
import { iso, pagingQuery } from '../http/schemas.ts';
import type { EventRow } from './repo.ts';
import { EVENT_TYPES } from './types.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

export const eventId = z.string().regex(/^evt_[A-Za-z0-9]{1,64}$/, 'must be an event id (evt_...)');

export const listEventsQuery = pagingQuery(eventId).extend({ type: z.enum(EVENT_TYPES).optional() });

export const eventResponse = z.object({
  id: z.string(),
  type: z.string(),
  createdAt: z.string(),
  data: z.record(z.string(), z.unknown()),
}).meta({ examples: [{ id: 'evt_4kq9x2m7p1', type: 'invoice.paid', createdAt: '2026-01-05T09:30:00.000Z', data: { id: EXAMPLE_ID.invoice, invoiceNumber: 'INV-2026-000042', status: 'paid', total: '431.92', currency: 'USD' } }] });

/** The event envelope of interface.md: id, type, createdAt, data. */
export function serialiseEvent(row: EventRow) {
  return { id: row.id, type: row.type, createdAt: iso(row.created_at)!, data: row.data };
}
