/**
 * The release step's part of issue 33: every secret kept in the database is stored as `crypto/envelope.ts` would
 * store it now, sealed with the first ENCRYPTION_KEY: plaintext written before a key was set, issue 21's license key
 * envelope and values sealed with an older key are sealed again. A value no given key opens stops the release with
 * one line naming the variable (`setup_failed`), so nothing serves with secrets it cannot use. A release step, not
 * a migration: migrations do not get the configuration, and the release step runs before anything serves.
 */
import type { AppDeps } from '../app-deps.ts';
import { keyringOf, SealedSecretError } from '../crypto/envelope.ts';
import { AppError } from '../errors.ts';
import { sealHostedLinkTokens } from '../invoices/hosted-links.ts';
import { prepareSigningKeys } from '../licenses/signing-keys.ts';
import { sealSecretSettings } from '../settings/service.ts';
import { sealEndpointSecrets } from '../webhooks/secret-at-rest.ts';

export async function sealSecretsAtRest({ db, config, logger }: AppDeps): Promise<void> {
  const keyring = keyringOf(config);
  try {
    const kids = await prepareSigningKeys(db, keyring);
    const endpoints = await sealEndpointSecrets(db, keyring);
    const settings = await sealSecretSettings(db, keyring);
    const hostedLinks = await sealHostedLinkTokens(db, keyring);
    if (kids.length + endpoints.length + settings.length + hostedLinks > 0)
      logger.info({ kids, endpoints, settings, hostedLinks }, 'sealed secrets at rest with the first ENCRYPTION_KEY');
  } catch (error) {
    if (error instanceof SealedSecretError) throw new AppError('setup_failed', error.message);
    throw error;
  }
}
