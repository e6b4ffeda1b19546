import type { Db } from '../db/knex.ts';
import { notFound } from '../errors.ts';
import { findLicenseById, recentActivationRows, type ActivationRow, type LicenseRow } from './repo.ts';

/**
 * One license as its customer sees it (the portal, P-5), with its `limit` most recently activated devices: another
 * customer's license is not found, as if it did not exist.
 */
export async function getCustomerLicense(
  db: Db,
  customerId: string,
  id: string,
  limit: number,
): Promise<{ license: LicenseRow; activations: ActivationRow[] }> {
  const license = await findLicenseById(db, id);
  if (!license || license.customer_id !== customerId) throw notFound('License');
  return { license, activations: await recentActivationRows(db, license.id, limit) };
}
