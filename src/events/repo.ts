import type { Db } from '../db/knex.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';

export interface EventRow {
  id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

export async function insertEvent(db: Db, row: { id: string; type: string; data: unknown }): Promise<EventRow> {
  const [created] = await db('events').insert({ ...row, data: JSON.stringify(row.data) }).returning('*');
  return created as EventRow;
}

export async function listEventRows(db: Db, page: PageQuery, type?: string): Promise<Page<EventRow>> {
  const query = db('events').select('*');
  if (type) query.where({ type });
  return paginate<EventRow>(query, 'events', page);
}

export async function findEventRow(db: Db, id: string): Promise<EventRow | undefined> {
  return db('events').where({ id }).first();
}
