/**
 * Endpoint secrets at rest (issue 33): the current and the previous secret are stored in the envelope of every
 * secret (`crypto/envelope.ts`). Both columns share one context, so a rotation moves the current secret into
 * `previous_secret` in SQL as it is, still sealed.
 */
import { inTransaction, type Db } from '../db/knex.ts';
import { openSecret, plaintextToReseal, sealSecret, type Keyring, type SealContext } from '../crypto/envelope.ts';
import { listEndpointSecretRows, updateEndpointSecretColumns } from './repo.ts';

const context = (endpointId?: string): SealContext => ({
  aad: 'webhook_endpoints.secret',
  label: endpointId ? `secret of webhook endpoint ${endpointId}` : 'webhook endpoint secret',
});

export const sealEndpointSecret = (keyring: Keyring, secret: string) => sealSecret(keyring, secret, context());

export const openEndpointSecret = (keyring: Keyring, stored: string, endpointId: string) =>
  openSecret(keyring, stored, context(endpointId));

/**
 * The release step: every endpoint's secrets stored as `sealEndpointSecret` would store them now. Throws
 * SealedSecretError (naming ENCRYPTION_KEY) when one cannot be opened. Returns the ids of the endpoints it sealed.
 */
export async function sealEndpointSecrets(db: Db, keyring: Keyring): Promise<string[]> {
  return inTransaction(db, async (trx) => {
    const sealed: string[] = [];
    for (const row of await listEndpointSecretRows(trx, { lock: true })) {
      const secret = await plaintextToReseal(keyring, row.secret, context(row.id));
      const previous = row.previous_secret
        ? await plaintextToReseal(keyring, row.previous_secret, context(row.id))
        : undefined;
      if (secret === undefined && previous === undefined) continue;
      await updateEndpointSecretColumns(trx, row.id, {
        secret: secret === undefined ? row.secret : await sealEndpointSecret(keyring, secret),
        previous_secret: previous === undefined ? row.previous_secret : await sealEndpointSecret(keyring, previous),
      });
      sealed.push(row.id);
    }
    return sealed;
  });
}
