/**
 * Issue 33, item 6, through the real release step (`npm run release`): it seals the secrets a database holds in
 * plaintext (written before encryption, or while no key was set), re-seals them under a new key while the old one
 * is listed beside it (`ENCRYPTION_KEY=new,old`; LICENSE_SIGNING_SECRET, the older name, still counts), stops with
 * one line naming ENCRYPTION_KEY when no given key opens them, and a production start refuses to run without a key.
 */
import test from 'ava';
import { databaseOfThisFile, roleArgs, spawnService } from '../faults/processes.ts';

const database = databaseOfThisFile(test);
const OLD = 'the-old-encryption-key-0123456789abcdef';
const NEW = 'the-new-encryption-key-0123456789abcdef';
const WEBHOOK_SECRET = 'whsec_legacy-plaintext-webhook-secret';
const PREVIOUS_SECRET = 'whsec_legacy-plaintext-previous-secret';
const IDP_SECRET = 'legacy-plaintext-idp-client-secret';

async function release(env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const child = spawnService('release', roleArgs('release'), {
    DATABASE_URL: database().url,
    LOG_LEVEL: 'warn',
    ...env,
  });
  const { code } = await child.exited;
  return { code, output: child.output() };
}

/** Every stored secret, as SQL reads it. */
async function stored(): Promise<string[]> {
  const db = database().knex;
  const endpoint = await db('webhook_endpoints').select('secret', 'previous_secret').first();
  const setting = (await db.raw(`select value #>> '{}' as value from settings where key = 'auth.idp.client_secret'`))
    .rows[0];
  const key = await db('license_signing_keys').select('private_key').first();
  return [endpoint.secret, endpoint.previous_secret, setting.value, key.private_key];
}

test.serial('a production start without ENCRYPTION_KEY refuses to run, with one line naming it', async (t) => {
  t.timeout(120_000);
  const refused = await release({ NODE_ENV: 'production' });
  t.is(refused.code, 1, refused.output);
  t.regex(refused.output, /^release: ENCRYPTION_KEY must be set in production\b.*$/m);
  t.is(
    Number((await database().knex('license_signing_keys').count('* as n').first())!.n),
    0,
    'nothing was done before the refusal',
  );
});

test.serial(
  'the release step seals plaintext secrets, re-seals them under a new key beside the old, and a wrong key stops it',
  async (t) => {
    t.timeout(180_000);
    const db = database().knex;
    // Rows as an earlier version stored them: plaintext.
    t.is((await release()).code, 0, 'a first release (no key) creates the license signing key in plaintext');
    await db('webhook_endpoints').insert({
      url: 'https://hooks.example.test/legacy',
      events: ['*'],
      secret: WEBHOOK_SECRET,
      previous_secret: PREVIOUS_SECRET,
      previous_secret_expires_at: db.raw(`now() + interval '1 day'`),
    });
    await db('settings').insert({ key: 'auth.idp.client_secret', value: JSON.stringify(IDP_SECRET) });
    const plaintexts = [WEBHOOK_SECRET, PREVIOUS_SECRET, IDP_SECRET];
    t.deepEqual((await stored()).slice(0, 3), plaintexts);

    // The older variable's name is still a key.
    const first = await release({ LICENSE_SIGNING_SECRET: OLD });
    t.is(first.code, 0, first.output);
    const underOld = await stored();
    underOld.forEach((value, i) => {
      t.false(
        plaintexts.some((p) => value.includes(p)),
        `stored value ${i} is not its plaintext`,
      );
      t.notRegex(value, /PRIVATE KEY/);
      t.regex(value, /^v2\./);
    });

    const rotated = await release({ ENCRYPTION_KEY: `${NEW},${OLD}` });
    t.is(rotated.code, 0, rotated.output);
    const underNew = await stored();
    for (const [i, value] of underNew.entries()) t.not(value, underOld[i], `stored value ${i} is sealed again`);

    // The new key alone opens everything; the old one alone no longer does, and changes nothing.
    t.is((await release({ ENCRYPTION_KEY: NEW })).code, 0);
    t.deepEqual(await stored(), underNew, 'nothing left to re-seal');
    const wrong = await release({ ENCRYPTION_KEY: OLD });
    t.is(wrong.code, 1, wrong.output);
    t.regex(wrong.output, /^release: ENCRYPTION_KEY does not decrypt .*: set the key it was stored with/m);
    t.false(wrong.output.includes(OLD));
    t.deepEqual(await stored(), underNew, 'nothing changed');

    // A production start with the key runs.
    const production = await release({ NODE_ENV: 'production', ENCRYPTION_KEY: NEW });
    t.is(production.code, 0, production.output);
  },
);
