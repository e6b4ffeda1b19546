import type { Db } from '../db/knex.ts';

export interface CustomerRow {
  id: string;
  name: string;
  email: string;
  company: string | null;
  tier: string | null;
  billing_address: string | null;
  tax_id: string | null;
  payment_method: string | null;
  health_score: number;
  created_at: Date;
  updated_at: Date;
}

export async function findCustomerRow(db: Db, id: string): Promise<CustomerRow | undefined> {
  return db('customers').where({ id }).first();
}
