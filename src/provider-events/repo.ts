/** SQL of stored provider events (D-62). */
import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';
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

/** Stores the event unless (provider, event id) is stored already; answers the new row's id, none for a duplicate. */
export async function insertProviderEventRow(
  db: Db,
  row: Pick<ProviderEventRow, 'id' | 'provider' | 'event_id' | 'event_type' | 'payload' | 'occurred_at' | 'subject_id'>,
): Promise<string | undefined> {
  const [stored] = await db('provider_events')
    .insert({ ...row, payload: JSON.stringify(row.payload) })
    .onConflict(['provider', 'event_id'])
    .ignore()
    .returning('id');
  return (stored as { id: string } | undefined)?.id;
}

export async function findProviderEventRow(db: Db, id: string): Promise<ProviderEventRow | undefined> {
  return db('provider_events').where({ id }).first();
}

export async function lockProviderEventRow(db: Db, id: string): Promise<ProviderEventRow | undefined> {
  return db('provider_events').where({ id }).forUpdate().first();
}

export async function updateProviderEventRow(
  db: Db,
  id: string,
  changes: Partial<Pick<ProviderEventRow, 'status' | 'failure_reason' | 'attempts' | 'processed_at'>>,
): Promise<ProviderEventRow> {
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

export function listProviderEventRows(
  db: Db,
  page: PageQuery,
  filters: { provider?: string; status?: string },
): Promise<Page<ProviderEventRow>> {
  const query = db('provider_events').select('*');
  if (filters.provider) query.where({ provider: filters.provider });
  if (filters.status) query.where({ status: filters.status });
  return paginate<ProviderEventRow>(query, 'provider_events', page);
}
