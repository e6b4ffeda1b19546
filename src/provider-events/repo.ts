/** SQL of stored provider events (D-62). */
import type { RawConnection } from '../db/fast-query.ts';
import type { Db } from '../db/knex.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';
import type { Provider } from './verify.ts';

export type ProviderEventStatus = 'received' | 'processed' | 'ignored' | 'failed';

export interface ProviderEventRow {
  id: string;
  provider: Provider;
  event_id: string;
  event_type: string;
  payload: unknown;
  occurred_at: Date | null;
  subject_id: string | null;
  status: ProviderEventStatus;
  failure_reason: string | null;
  attempts: number;
  created_at: Date;
  processed_at: Date | null;
}

/** Stores the event unless (provider, event id) is stored already; answers the new row's id, or undefined for a duplicate. */
export async function insertProviderEventOn(connection: RawConnection, row: Pick<ProviderEventRow, 'provider' | 'event_id' | 'event_type' | 'payload' | 'occurred_at' | 'subject_id'>): Promise<{ id: string } | undefined> {
  const result = await connection.query({
    name: 'provider_events_insert',
    text: `insert into provider_events (provider, event_id, event_type, payload, occurred_at, subject_id)
           values ($1, $2, $3, $4, $5, $6) on conflict (provider, event_id) do nothing returning id`,
    values: [row.provider, row.event_id, row.event_type, JSON.stringify(row.payload), row.occurred_at, row.subject_id],
  });
  return result.rows[0] as { id: string } | undefined;
}

export async function findProviderEventRow(db: Db, id: string): Promise<ProviderEventRow | undefined> {
  return db('provider_events').where({ id }).first();
}

export async function lockProviderEventRow(db: Db, id: string): Promise<ProviderEventRow | undefined> {
  return db('provider_events').where({ id }).forUpdate().first();
}

export async function updateProviderEventRow(db: Db, id: string, changes: Partial<Pick<ProviderEventRow, 'status' | 'failure_reason' | 'attempts' | 'processed_at'>>): Promise<ProviderEventRow> {
  const [row] = await db('provider_events').where({ id }).update(changes).returning('*');
  return row as ProviderEventRow;
}

/** Whether a status event about the same subject, newer than `occurredAt`, was already applied. */
export async function newerStatusEventApplied(db: Db, event: ProviderEventRow): Promise<boolean> {
  if (!event.subject_id || !event.occurred_at) return false;
  const row = await db('provider_events')
    .where({ provider: event.provider, subject_id: event.subject_id, status: 'processed' })
    .where('occurred_at', '>', event.occurred_at)
    .whereNot({ id: event.id })
    .first('id');
  return Boolean(row);
}

export function listProviderEventRows(db: Db, page: PageQuery, filters: { provider?: string; status?: string }): Promise<Page<ProviderEventRow>> {
  const query = db('provider_events').select('*');
  if (filters.provider) query.where({ provider: filters.provider });
  if (filters.status) query.where({ status: filters.status });
  return paginate<ProviderEventRow>(query, 'provider_events', page);
}
