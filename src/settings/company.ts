import type { Db } from '../db/knex.ts';
import { getSettings } from './service.ts';

/** The seller as customers see it (K-1): on emails, the hosted invoice page and the portal. */
export interface Company {
  name: string;
  email: string;
  address: string;
  taxId: string;
}

/** The settings that make the company's details, for a caller reading them with others in one query. */
export const COMPANY_SETTINGS = ['company.name', 'company.email', 'company.address', 'company.tax_id'] as const;

export function companyOf(s: { [K in (typeof COMPANY_SETTINGS)[number]]: string }): Company {
  return {
    name: s['company.name'],
    email: s['company.email'],
    address: s['company.address'],
    taxId: s['company.tax_id'],
  };
}

export async function companyDetails(db: Db): Promise<Company> {
  return companyOf(await getSettings(db, [...COMPANY_SETTINGS]));
}
