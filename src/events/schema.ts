import { z } from 'zod';
import { iso, pagingQuery } from '../http/schemas.ts';
import type { EventRow } from './repo.ts';
import { EVENT_TYPES } from './types.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

export const eventId = z.string().regex(/^evt_[A-Za-z0-9]{1,64}$/, 'must be an event id (evt_...)');

export const listEventsQuery = pagingQuery(eventId).extend({ type: z.enum(EVENT_TYPES).optional() });

export const eventResponse = z
  .object({
    id: z.string(),
    type: z.string(),
    createdAt: z.string(),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({
    examples: [
      {
        id: 'evt_4kq9x2m7p1',
        type: 'invoice.paid',
        createdAt: '2026-01-05T09:30:00.000Z',
        data: {
          id: EXAMPLE_ID.invoice,
          invoiceNumber: 'INV-2026-000042',
          status: 'paid',
          total: '431.92',
          currency: 'USD',
        },
      },
      // D-102: a dead device removed by the minute sweep, once per device.
      {
        id: 'evt_8w3n5r0t6c',
        type: 'license.device_culled',
        createdAt: '2026-02-05T10:01:00.000Z',
        data: {
          licenseId: 'e2051627-8394-4a5b-826d-7e8f90011223',
          licenseKey: EXAMPLE_ID.licenseKey,
          deviceId: EXAMPLE_ID.deviceId,
          lastSeenAt: '2026-02-05T09:40:00.000Z',
        },
      },
    ],
  });

/** The event envelope of interface.md: id, type, createdAt, data. */
export function serialiseEvent(row: EventRow) {
  return { id: row.id, type: row.type, createdAt: iso(row.created_at)!, data: row.data };
}
