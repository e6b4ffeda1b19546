/** SQL of stored provider events (D-62). */
import type { Db } from '../db/knex.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';
import type { GateStatement } from '../queue/enqueue.ts';
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

/**
 * The insert that stores the event unless (provider, event id) is stored already, returning the new row's id
 * (no row for a duplicate): the gate of the statement that also queues its job (queue/enqueue.ts enqueueWhen).
 */
export function insertProviderEventStatement(
  row: Pick<ProviderEventRow, 'id' | 'provider' | 'event_id' | 'event_type' | 'payload' | 'occurred_at' | 'subject_id'>,
): GateStatement {
  return {
    text: `insert into provider_events (id, provider, event_id, event_type, payload, occurred_at, subject_id)
           values ($1, $2, $3, $4, $5, $6, $7) on conflict (provider, event_id) do nothing returning id`,
    values: [
      row.id,
      row.provider,
      row.event_id,
      row.event_type,
      JSON.stringify(row.payload),
      row.occurred_at,
      row.subject_id,
    ],
  };
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
