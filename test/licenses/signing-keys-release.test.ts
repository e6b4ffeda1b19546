/**
 * D-100 through the real release step (`npm run release`, src/release.ts): it creates the signing key,
 * two releases at once create one, a secret set later (LICENSE_SIGNING_SECRET, the older name of ENCRYPTION_KEY)
 * seals it, and a wrong secret stops the release with one line naming ENCRYPTION_KEY.
 */
import test from 'ava';
import { databaseOfThisFile, roleArgs, spawnService } from '../faults/processes.ts';

const database = databaseOfThisFile(test);

async function release(env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const child = spawnService('release', roleArgs('release'), {
    DATABASE_URL: database().url,
    LOG_LEVEL: 'warn',
    ...env,
  });
  const { code } = await child.exited;
  return { code, output: child.output() };
}

const keys = () =>
  database().knex('license_signing_keys').select('kid', 'private_key', 'private_key_encryption', 'rotated_at');

test.serial('two releases at once create one current key, stored unencrypted without a secret', async (t) => {
  t.timeout(120_000);
  const runs = await Promise.all([release(), release()]);
  for (const run of runs) t.is(run.code, 0, run.output);
  const rows = await keys();
  t.is(rows.length, 1);
  t.like(rows[0], { private_key_encryption: 'none', rotated_at: null });
  t.regex(rows[0]!.private_key, /^-----BEGIN PRIVATE KEY-----/);
});

test.serial(
  'a release with LICENSE_SIGNING_SECRET seals the key; one with a wrong secret stops naming ENCRYPTION_KEY',
  async (t) => {
    t.timeout(120_000);
    const [before] = await keys();
    const sealed = await release({ LICENSE_SIGNING_SECRET: 'release secret' });
    t.is(sealed.code, 0, sealed.output);
    const [after] = await keys();
    t.is(after!.kid, before!.kid);
    t.is(after!.private_key_encryption, 'scrypt-aes-256-gcm');
    t.notRegex(after!.private_key, /PRIVATE KEY/);

    const wrong = await release({ LICENSE_SIGNING_SECRET: 'another secret' });
    t.is(wrong.code, 1);
    t.regex(
      wrong.output,
      /^release: ENCRYPTION_KEY does not decrypt the license signing key \S+: set the key it was stored with/m,
    );
    t.false(wrong.output.includes('release secret'));
    t.is((await keys())[0]!.private_key, after!.private_key, 'nothing changed');
  },
);
