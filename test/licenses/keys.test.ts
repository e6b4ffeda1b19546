/**
 * License keys (D-30): layout and Crockford alphabet, uniqueness with retry on collision, the prefix
 * from the setting and the environment, and trimmed case-insensitive lookup everywhere a key is given.
 */
import test from 'ava';
import { generateLicenseKey, KEY_ALPHABET, normaliseLicenseKey } from '../../src/licenses/key.ts';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createLicense } from '../../src/licenses/service.ts';
import {
  activationRows,
  createCustomer,
  createProduct,
  CROCKFORD,
  DEFAULT_KEY_PATTERN,
  getLicense,
  issueLicense,
  licenseEvents,
  startLicenseApp,
  validate,
  verify,
  type LicenseKit,
} from './fixtures.ts';

let kit: LicenseKit;
test.before(async () => {
  kit = await startLicenseApp();
});
test.after.always(async () => kit?.close());

test('a new key has the default layout LIC-XXXX-XXXX-XXXX in Crockford base32', async (t) => {
  const license = await issueLicense(kit);
  t.regex(license.licenseKey, DEFAULT_KEY_PATTERN);
});

test(
  '200 keys: every character from the Crockford alphabet, ' + 'every key unique, the whole alphabet in use',
  async (t) => {
    const customer = await createCustomer(kit);
    const product = await createProduct(kit);
    const keys: string[] = [];
    // Ten at a time: quick, and the admin API is not rate limited.
    for (let i = 0; i < 20; i++) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, () => issueLicense(kit, { customerId: customer.id, productId: product.id })),
      );
      keys.push(...batch.map((l) => l.licenseKey));
    }
    t.is(keys.length, 200);
    t.is(new Set(keys).size, 200);
    for (const key of keys) t.regex(key, DEFAULT_KEY_PATTERN);
    const drawn = new Set(keys.flatMap((k) => k.slice(4).replaceAll('-', '').split('')));
    for (const ch of drawn) t.true(CROCKFORD.includes(ch), ch);
    // 2400 draws from 32 characters: missing one by chance has odds below 1e-30.
    t.is(drawn.size, 32);
  },
);

test('the alphabet of the generator is Crockford base32 without I, L, O, U', (t) => {
  t.is(KEY_ALPHABET, CROCKFORD);
  for (const banned of 'ILOU') t.false(KEY_ALPHABET.includes(banned));
  t.regex(generateLicenseKey('ZZ9'), /^ZZ9-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
  t.is(normaliseLicenseKey('  lic-abcd-efgh-jkmn\t\n'), 'LIC-ABCD-EFGH-JKMN');
});

// Serial: the prefix setting would otherwise change the keys of the concurrent tests.
test.serial('the prefix follows the setting licenses.key_prefix, for new keys only', async (t) => {
  const before = await issueLicense(kit);
  const put = await kit.admin('/api/settings', { method: 'PUT', body: { 'licenses.key_prefix': 'ACME' } });
  t.is(put.status, 200);
  try {
    const after = await issueLicense(kit);
    t.regex(after.licenseKey, /^ACME-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
    // Keys issued under the old prefix keep working.
    t.true((await verify(kit, before.licenseKey)).body.valid);
    t.true((await verify(kit, after.licenseKey)).body.valid);
    // A prefix that would break the layout is refused.
    for (const bad of ['acme', 'AC-ME', '', 'TOOLONGPREFIX', 5]) {
      t.is(
        (await kit.admin('/api/settings', { method: 'PUT', body: { 'licenses.key_prefix': bad } })).status,
        400,
        String(bad),
      );
    }
  } finally {
    await kit.admin('/api/settings', { method: 'PUT', body: { 'licenses.key_prefix': 'LIC' } });
  }
  t.regex((await issueLicense(kit)).licenseKey, DEFAULT_KEY_PATTERN);
});

test('the prefix follows LICENSE_KEY_PREFIX, which overrides the stored setting', async (t) => {
  const envKit = await startLicenseApp({ LICENSE_KEY_PREFIX: 'ENV' });
  try {
    t.regex(
      (await issueLicense(envKit)).licenseKey,
      /^ENV-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/,
    );
    await envKit.admin('/api/settings', { method: 'PUT', body: { 'licenses.key_prefix': 'ACME' } });
    t.regex((await issueLicense(envKit)).licenseKey, /^ENV-/);
  } finally {
    await envKit.close();
  }
});

test('verify and validate find a key given in lower case with surrounding blanks', async (t) => {
  const license = await issueLicense(kit, { maxActivations: 2 });
  const sloppy = `  ${license.licenseKey.toLowerCase()} `;
  t.deepEqual((await verify(kit, sloppy)).body, { valid: true, status: 'active', features: {}, expiresAt: null });
  t.like((await validate(kit, sloppy, 'pc-1')).body, { valid: true, currentActivations: 1 });
  t.like((await validate(kit, `\t${license.licenseKey}\n`, 'pc-1')).body, { valid: true, currentActivations: 1 });
  t.is(await activationRows(kit.app.db, license.id), 1);
});

test('admin routes by key accept lower case: GET, PUT, activations, DELETE activation, DELETE', async (t) => {
  const license = await issueLicense(kit, { maxActivations: 2 });
  const lower = license.licenseKey.toLowerCase();
  await validate(kit, license.licenseKey, 'pc-1');

  const got = await kit.admin(`/api/licenses/${lower}`);
  t.is(got.status, 200);
  t.is(got.body.id, license.id);
  const put = await kit.admin(`/api/licenses/${lower}`, { method: 'PUT', body: { features: { seats: 3 } } });
  t.is(put.status, 200);
  t.deepEqual(put.body.features, { seats: 3 });
  const listed = await kit.admin(`/api/licenses/${lower}/activations`);
  t.is(listed.status, 200);
  t.deepEqual(
    listed.body.map((a: { deviceId: string }) => a.deviceId),
    ['pc-1'],
  );
  t.is((await kit.admin(`/api/licenses/${lower}/activations/pc-1`, { method: 'DELETE' })).status, 204);
  t.is((await getLicense(kit, license.licenseKey)).currentActivations, 0);
  t.is((await kit.admin(`/api/licenses/${lower}`, { method: 'DELETE' })).status, 204);
  t.is((await kit.admin(`/api/licenses/${license.licenseKey}`)).status, 404);
});

test('a device id is matched exactly: device ids are not case-folded', async (t) => {
  const license = await issueLicense(kit, { maxActivations: 5 });
  await validate(kit, license.licenseKey, 'Device-A');
  t.like((await validate(kit, license.licenseKey, 'device-a')).body, { valid: true, currentActivations: 2 });
});

test('a key collision draws again: the license gets a fresh key and one license.created event', async (t) => {
  const existing = await issueLicense(kit);
  const fresh = 'LIC-ZZZZ-ZZZZ-ZZZ1';
  const draws = [existing.licenseKey, existing.licenseKey, fresh];
  const row = await createLicense(
    kit.app.db,
    { customerId: existing.customerId, productId: existing.productId },
    kit.app.deps.config,
    SYSTEM_ACTOR,
    () => draws.shift()!,
  );
  t.is(row.license_key, fresh);
  t.is(draws.length, 0);
  t.is((await licenseEvents(kit, 'license.created', row.id)).length, 1);
});

test('a collision inside an outer transaction (an Idempotency-Key request) also draws again', async (t) => {
  const existing = await issueLicense(kit);
  const fresh = 'LIC-ZZZZ-ZZZZ-ZZZ2';
  const draws = [existing.licenseKey, fresh];
  const row = await kit.app.db.transaction((trx) =>
    createLicense(
      trx,
      { customerId: existing.customerId, productId: existing.productId },
      kit.app.deps.config,
      SYSTEM_ACTOR,
      () => draws.shift()!,
    ),
  );
  t.is(row.license_key, fresh);
  t.is((await getLicense(kit, fresh)).id, row.id);
});

test('collisions on every attempt give up with the database error rather than loop', async (t) => {
  const existing = await issueLicense(kit);
  let draws = 0;
  await t.throwsAsync(
    createLicense(
      kit.app.db,
      { customerId: existing.customerId, productId: existing.productId },
      kit.app.deps.config,
      SYSTEM_ACTOR,
      () => {
        draws += 1;
        return existing.licenseKey;
      },
    ),
  );
  t.is(draws, 5);
});

test('POST /api/licenses with an Idempotency-Key answers the same license on replay', async (t) => {
  const customer = await createCustomer(kit);
  const product = await createProduct(kit);
  const headers = { 'Idempotency-Key': `lic-${customer.id}` };
  const first = await kit.admin('/api/licenses', { headers, body: { customerId: customer.id, productId: product.id } });
  const again = await kit.admin('/api/licenses', { headers, body: { customerId: customer.id, productId: product.id } });
  t.is(first.status, 201);
  t.is(again.status, 201);
  t.is(again.body.licenseKey, first.body.licenseKey);
  t.is((await kit.admin(`/api/licenses?customerId=${customer.id}`)).body.length, 1);
});
