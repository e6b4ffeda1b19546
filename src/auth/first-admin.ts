import type { AppDeps } from '../app-deps.ts';
import { countUsers } from './repo.ts';
import { ADMIN_ROLE, createLocalUser } from './service.ts';

/** Creates the first admin from ADMIN_EMAIL/ADMIN_PASSWORD when no user exists yet (D-10). */
export async function ensureFirstAdmin({ db, config, logger }: AppDeps): Promise<void> {
  if (!config.ADMIN_EMAIL || !config.ADMIN_PASSWORD) return;
  if ((await countUsers(db)) > 0) return;
  try {
    await createLocalUser(db, { email: config.ADMIN_EMAIL, password: config.ADMIN_PASSWORD, role: ADMIN_ROLE });
    logger.info({ email: config.ADMIN_EMAIL }, 'created the first admin user');
  } catch (err) {
    // Another process starting at the same moment may have created it.
    if ((await countUsers(db)) === 0) throw err;
  }
}
