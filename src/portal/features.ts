import type { Db } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import type { PortalFeature } from '../settings/definitions.ts';
import { COMPANY_SETTINGS, companyOf, type Company } from '../settings/company.ts';
import { getSetting, getSettings } from '../settings/service.ts';

/** P-7: the features switched on (`portal.features`), read fresh so a change in Settings holds at once. */
export async function portalFeatures(db: Db): Promise<Set<PortalFeature>> {
  return new Set(await getSetting(db, 'portal.features'));
}

/** A switched-off feature's action is refused (403) before anything is read or written. */
export async function requireFeature(db: Db, feature: PortalFeature): Promise<void> {
  if (!(await portalFeatures(db)).has(feature))
    throw new AppError('forbidden', 'This action is not available in the portal: contact us to make the change');
}

/** What every portal page shows besides its records: the company (K-1) and the features on (P-7), in one query. */
export async function portalSite(db: Db): Promise<{ company: Company; features: Set<PortalFeature> }> {
  const s = await getSettings(db, [...COMPANY_SETTINGS, 'portal.features']);
  return { company: companyOf(s), features: new Set(s['portal.features']) };
}
