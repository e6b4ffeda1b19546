/**
 * Shared helpers of the license tests: an app with an admin session, licenses made over the admin API, public calls.
 */
import { randomUUID } from 'node:crypto';
import type { ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request, type Json, type JsonResponse, type RequestOptions } from '../helpers/http.ts';

/** The default key layout (D-30): `LIC-` then three groups of four Crockford base32 characters. */
export const DEFAULT_KEY_PATTERN = /^LIC-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/;
export const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export interface License {
  id: string;
  licenseKey: string;
  customerId: string;
  productId: string;
  status: string;
  maxActivations: number | null;
  currentActivations: number;
  features: Record<string, unknown>;
  expiresAt: string | null;
  heartbeatIntervalSeconds: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface LicenseKit {
  app: TestApp;
  cookie: string;
  /** An admin API call with the session cookie. */
  admin<T = Json>(path: string, options?: RequestOptions): Promise<JsonResponse<T>>;
  close(): Promise<void>;
}

export async function startLicenseApp(env: Record<string, string> = {}): Promise<LicenseKit> {
  const app = await startTestApp(env);
  const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
  return {
    app,
    cookie,
    admin: (path, options = {}) => request(app.baseUrl, path, { cookie, ...options }),
    close: () => app.close(),
  };
}

export async function createCustomer(kit: LicenseKit, name = 'License Holder'): Promise<{ id: string; name: string }> {
  const res = await kit.admin('/api/customers', { body: { name, email: `lic-${randomUUID()}@example.test` } });
  if (res.status !== 201) throw new Error(`create customer: ${res.status} ${res.text}`);
  return res.body;
}

export async function createProduct(
  kit: LicenseKit,
  name = 'Desktop Suite',
): Promise<{ id: string; name: string; productType: string }> {
  const res = await kit.admin('/api/products', { body: { name, productType: 'licensed', price: '99.00' } });
  if (res.status !== 201) throw new Error(`create product: ${res.status} ${res.text}`);
  return res.body;
}

/** Issues a license over the admin API; a new customer and product are made unless given. */
export async function issueLicense(kit: LicenseKit, body: Record<string, unknown> = {}): Promise<License> {
  const customerId = body.customerId ?? (await createCustomer(kit)).id;
  const productId = body.productId ?? (await createProduct(kit)).id;
  const res = await kit.admin('/api/licenses', { body: { customerId, productId, ...body } });
  if (res.status !== 201) throw new Error(`create license: ${res.status} ${res.text}`);
  return res.body;
}

export async function getLicense(kit: LicenseKit, key: string): Promise<License> {
  const res = await kit.admin(`/api/licenses/${encodeURIComponent(key)}`);
  if (res.status !== 200) throw new Error(`get license: ${res.status} ${res.text}`);
  return res.body;
}

export async function updateLicense(kit: LicenseKit, key: string, body: Record<string, unknown>): Promise<License> {
  const res = await kit.admin(`/api/licenses/${encodeURIComponent(key)}`, { method: 'PUT', body });
  if (res.status !== 200) throw new Error(`update license: ${res.status} ${res.text}`);
  return res.body;
}

export const verify = (kit: LicenseKit, licenseKey: unknown) =>
  request(kit.app.baseUrl, '/api/licenses/verify', { body: { licenseKey } });

export const validate = (
  kit: LicenseKit,
  licenseKey: unknown,
  deviceId: unknown,
  deviceName: unknown = `Device ${String(deviceId)}`,
) => request(kit.app.baseUrl, '/api/licenses/validate', { body: { licenseKey, deviceId, deviceName } });

/** A license with one device already activated, so refusals of known devices show too. */
export async function licenseWithDevice(kit: LicenseKit, body: Record<string, unknown> = {}): Promise<License> {
  const license = await issueLicense(kit, { maxActivations: 5, features: { pro: true }, ...body });
  const res = await validate(kit, license.licenseKey, 'known-device');
  if (!res.body.valid) throw new Error(`first activation refused: ${res.text}`);
  return license;
}

/**
 * The admin read says `status`, verify answers valid false with it, and validate is refused with `error`
 * for both a known and a new device, adding no activation.
 */
export async function assertRefused(
  t: ExecutionContext,
  kit: LicenseKit,
  license: License,
  status: string,
  error: string,
): Promise<void> {
  const before = await getLicense(kit, license.licenseKey);
  const v = await verify(kit, license.licenseKey);
  t.is(v.status, 200);
  t.deepEqual(v.body, { valid: false, status, features: before.features, expiresAt: before.expiresAt });
  for (const device of ['known-device', 'new-device']) {
    const res = await validate(kit, license.licenseKey, device);
    t.is(res.status, 200, device);
    t.deepEqual(
      res.body,
      { valid: false, error, status, features: before.features, expiresAt: before.expiresAt },
      device,
    );
  }
  t.is(await activationRows(kit.app.db, license.id), before.currentActivations);
  t.is((await getLicense(kit, license.licenseKey)).currentActivations, before.currentActivations);
  t.is(before.status, status);
}

/** Activation rows of a license, straight from the table. */
export async function activationRows(db: Knex, licenseId: string): Promise<number> {
  const [row] = await db('license_activations')
    .where({ license_id: licenseId })
    .count<{ count: string }[]>('* as count');
  return Number(row!.count);
}

/** Row counts of the license tables, to show a refused request changed nothing. */
export async function tableCounts(db: Knex): Promise<{ licenses: number; activations: number; events: number }> {
  const count = async (table: string) => Number((await db(table).count<{ count: string }[]>('* as count'))[0]!.count);
  return {
    licenses: await count('licenses'),
    activations: await count('license_activations'),
    events: await count('events'),
  };
}

export const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

/** The recorded events of `type` about one license, oldest first. */
export async function licenseEvents(
  kit: LicenseKit,
  type: string,
  licenseId: string,
): Promise<{ id: string; type: string; createdAt: string; data: Record<string, unknown> }[]> {
  const res = await kit.admin(`/api/billing/events?type=${type}&limit=500`);
  if (res.status !== 200) throw new Error(`list events: ${res.status} ${res.text}`);
  return res.body.filter((e: { data: { licenseId?: string } }) => e.data.licenseId === licenseId);
}
