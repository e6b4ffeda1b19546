import type { Db } from '../db/knex.ts';
import { getSettings } from './service.ts';

/** The seller as customers see it (K-1): on emails, the hosted invoice page and the portal. */
export interface Company {
  name: string;
  email: string;
  address: string;
  taxId: string;
}

export async function companyDetails(db: Db): Promise<Company> {
  const s = await getSettings(db, ['company.name', 'company.email', 'company.address', 'company.tax_id']);
  return {
    name: s['company.name'],
    email: s['company.email'],
    address: s['company.address'],
    taxId: s['company.tax_id'],
  };
}
