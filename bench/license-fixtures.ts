/**
 * Licenses for the public license benchmarks, inserted straight into the bench database before the
 * service starts: one customer, one licensed product, licenses with keys in the real layout, and one
 * activated device on each license that the known-device benchmark re-validates and the heartbeat benchmark
 * checks in.
 */
import type { Knex } from 'knex';
import { generateLicenseKey } from '../src/licenses/key.ts';

/** Licenses with one device each: verify reads them, validate (known device) re-validates their device. */
const KNOWN_DEVICE_LICENSES = 1000;
/** maxActivations null: validate with new devices spreads its activations over these, not one hot row. */
const UNLIMITED_LICENSES = 100;

/**
 * The public license endpoints are rate-limited per client IP (D-16), and all bench traffic comes from
 * 127.0.0.1; at the default 600/min every benchmark would be 429 after 600 requests. So the bench raises
 * `licenses.rate_limit_per_minute` in the settings table (the service's code is untouched). The setting's
 * schema allows at most 1_000_000 (src/settings/definitions.ts): a larger stored value, e.g. 100_000_000,
 * fails validation and the service silently falls back to the default 600. 1_000_000 per 60 s fixed
 * window is about 16.7k req/s sustained for a whole minute, far above what one process answers here.
 * Stored before the service starts, so its 5 s settings cache (src/settings/cache.ts) never holds 600.
 */
export const BENCH_LICENSE_RATE_LIMIT_PER_MINUTE = 1_000_000;

export interface LicenseFixtures {
  /** Active licenses, each with this one device activated in setup. */
  knownDevices: Array<{ licenseKey: string; deviceId: string }>;
  /** Active licenses with maxActivations null, no device yet. */
  unlimitedLicenseKeys: string[];
}

/** `count` distinct keys from the service's own generator (`LIC-XXXX-XXXX-XXXX`, Crockford base32). */
function distinctKeys(count: number): string[] {
  const keys = new Set<string>();
  while (keys.size < count) keys.add(generateLicenseKey('LIC'));
  return [...keys];
}

export async function seedLicenses(knex: Knex): Promise<LicenseFixtures> {
  await knex('settings')
    .insert({ key: 'licenses.rate_limit_per_minute', value: JSON.stringify(BENCH_LICENSE_RATE_LIMIT_PER_MINUTE) })
    .onConflict('key')
    .merge(['value']);

  const [customer] = await knex('customers')
    .insert({ name: 'Bench Licensee', email: 'licensee@bench.test', company: 'Bench Vendor', tier: 'enterprise' })
    .returning('id');
  const [product] = await knex('products')
    .insert({
      name: 'Bench Desktop App',
      product_type: 'licensed',
      description: 'Seeded by bench/license-fixtures.ts',
      price: '49.00',
      currency: 'USD',
    })
    .returning('id');

  const keys = distinctKeys(KNOWN_DEVICE_LICENSES + UNLIMITED_LICENSES);
  const knownKeys = keys.slice(0, KNOWN_DEVICE_LICENSES);
  const unlimitedLicenseKeys = keys.slice(KNOWN_DEVICE_LICENSES);
  const features = JSON.stringify({ pro: true, seats: 5 });
  const base = { customer_id: customer.id, product_id: product.id, status: 'active', features };
  // A limit of 3 with one device used: re-validation must not count the device again, and nothing refuses.
  // Floating seats with an hourly heartbeat (D-102): the heartbeat bench's devices stay live through any run.
  const known: Array<{ id: string; license_key: string }> = await knex('licenses')
    .insert(
      knownKeys.map((license_key) => ({
        ...base,
        license_key,
        max_activations: 3,
        current_activations: 1,
        heartbeat_interval_seconds: 3600,
      })),
    )
    .returning(['id', 'license_key']);
  await knex('licenses').insert(
    unlimitedLicenseKeys.map((license_key) => ({ ...base, license_key, max_activations: null })),
  );

  const knownDevices = known.map((row, i) => ({
    licenseKey: row.license_key,
    deviceId: `bench-known-device-${i + 1}`,
  }));
  const idByKey = new Map(known.map((row) => [row.license_key, row.id]));
  await knex('license_activations').insert(
    knownDevices.map((d) => ({
      license_id: idByKey.get(d.licenseKey)!,
      device_id: d.deviceId,
      device_name: 'Bench Workstation',
    })),
  );
  await knex.raw('analyze settings, customers, products, licenses, license_activations');
  return { knownDevices, unlimitedLicenseKeys };
}
