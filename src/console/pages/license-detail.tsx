/**
 * `/admin/licenses/:key` (console.md "operations"): a license's features, devices and audit entries, and its actions.
 */
import { auditEntriesOf } from '../../audit/service.ts';
import { customerNames } from '../../customers/service.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { normaliseLicenseKey } from '../../licenses/key.ts';
import { SETTABLE_STATUSES, updateLicenseBody } from '../../licenses/schema.ts';
import { getLicenseWithDevices, removeActivation, updateLicense } from '../../licenses/service.ts';
import { effectiveStatus, isDeviceDead } from '../../licenses/status.ts';
import { getProduct } from '../../products/service.ts';
import { AuditTrail } from '../components/AuditTrail.tsx';
import { ErrorBox, Field, Form, kept } from '../components/Form.tsx';
import { Layout } from '../components/Layout.tsx';
import { Table } from '../components/Table.tsx';
import { field } from '../http/form.ts';
import { defineAction, definePage } from '../http/route.ts';
import { When } from './customers-parts.tsx';
import { FORMS, LicenseFields, licenseFields, usedOfLimit } from './licenses-parts.tsx';

/** Devices listed on the page; a license with more says how many it has. */
const DEVICES_SHOWN = 200;

const licenseUrl = (key: string) => `/admin/licenses/${encodeURIComponent(key)}`;

/** A feature's value as one line: strings as they are, numbers, booleans and lists as JSON. */
const featureText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

export const licensePage = definePage({
  path: '/admin/licenses/:key',
  async render({ deps, params, viewer, notice, state }) {
    const { license, activations } = await getLicenseWithDevices(deps.db, params.key!, DEVICES_SHOWN);
    const key = license.license_key;
    const [names, product, audit] = await Promise.all([
      customerNames(deps.db, [license.customer_id]),
      getProduct(deps.db, license.product_id),
      auditEntriesOf(deps.db, 'license', key),
    ]);
    const now = new Date();
    const status = effectiveStatus(license, now);
    const interval = license.heartbeat_interval_seconds;
    const isDead = (a: (typeof activations)[number]) => isDeviceDead(a, license, now);
    // A dead device may still be in the stored count until a validate or the sweep takes it out (D-102).
    const deadShown = activations.filter(isDead).length;
    const features = Object.entries(license.features);
    const statusState = state?.name === FORMS.status ? state : undefined;
    const deviceState = state?.name === FORMS.device ? state : undefined;
    return (
      <Layout title={key} viewer={viewer} section="Licenses" notice={notice}>
        <p class="crumbs">
          <a href="/admin/licenses">Licenses</a>
        </p>
        <h1>
          <code>{key}</code>
        </h1>
        <dl class="props">
          <dt>Status</dt>
          <dd>
            <span class="status">{status}</span>
          </dd>
          <dt>Customer</dt>
          <dd>
            <a href={`/admin/customers/${license.customer_id}`}>
              {names.get(license.customer_id) ?? license.customer_id}
            </a>
          </dd>
          <dt>Product</dt>
          <dd>{product.name}</dd>
          <dt>Activations</dt>
          <dd>
            {usedOfLimit(license.current_activations, license.max_activations)}
            {deadShown > 0 ? ` (${deadShown} dead: ${deadShown === 1 ? 'its seat is' : 'their seats are'} free)` : ''}
          </dd>
          <dt>Expires</dt>
          <dd>{license.expires_at ? <When value={license.expires_at} /> : 'never'}</dd>
          <dt>Heartbeats</dt>
          <dd>
            {interval === null
              ? 'off'
              : `every ${interval} s; a device silent for ${2 * interval} s is dead and frees its seat`}
          </dd>
          <dt>Created</dt>
          <dd>
            <When value={license.created_at} />
          </dd>
          <dt>Updated</dt>
          <dd>
            <When value={license.updated_at} />
          </dd>
        </dl>
        {status === 'revoked' && !statusState ? (
          <p class="muted">Revoked is final: this license's status cannot change.</p>
        ) : (
          <details open={statusState ? true : undefined}>
            <summary>Change status</summary>
            <Form
              name={FORMS.status}
              action={`${licenseUrl(key)}/status`}
              csrf={viewer.csrf}
              state={statusState}
              submit="Change status"
            >
              <Field
                label="New status"
                name="status"
                options={SETTABLE_STATUSES}
                value={kept(statusState, FORMS.status, 'status', license.status)}
                state={statusState}
              />
            </Form>
          </details>
        )}
        <details open={state?.name === FORMS.edit ? true : undefined}>
          <summary>Edit limits, heartbeats, expiry and features</summary>
          <Form name={FORMS.edit} action={licenseUrl(key)} csrf={viewer.csrf} state={state} submit="Save changes">
            <LicenseFields
              form={FORMS.edit}
              state={state}
              current={{
                maxActivations: license.max_activations,
                expiresAt: license.expires_at,
                features: license.features,
                heartbeatIntervalSeconds: interval,
              }}
            />
          </Form>
        </details>
        <section id="features" class="words" aria-labelledby="features-h">
          <h2 id="features-h">Features</h2>
          <Table
            rows={features}
            empty="No features."
            columns={[
              { header: 'Feature', cell: ([name]) => <code>{name}</code> },
              { header: 'Value', cell: ([, value]) => featureText(value) },
            ]}
          />
        </section>
        <section id="activations" class="words" aria-labelledby="activations-h">
          <h2 id="activations-h">Activations</h2>
          {deviceState ? <ErrorBox state={deviceState} /> : null}
          <Table
            rows={activations}
            empty="No devices activated."
            columns={[
              { header: 'Device ID', cell: (a) => <code>{a.device_id}</code> },
              { header: 'Name', cell: (a) => a.device_name },
              { header: 'Activated', cell: (a) => <When value={a.activated_at} /> },
              { header: 'Last heartbeat or validate', cell: (a) => <When value={a.last_seen_at} /> },
              { header: 'State', cell: (a) => <span class="status">{isDead(a) ? 'dead' : 'live'}</span> },
              {
                header: 'Remove',
                cell: (a) => (
                  <Form
                    name={FORMS.device}
                    action={`${licenseUrl(key)}/activations/${encodeURIComponent(a.device_id)}/delete`}
                    csrf={viewer.csrf}
                    submit="Remove device"
                  >
                    {null}
                  </Form>
                ),
              },
            ]}
          />
          {license.current_activations > activations.length ? (
            <p class="more">
              {`Showing the ${activations.length} most recently activated of ` +
                `${license.current_activations} devices.`}
            </p>
          ) : null}
        </section>
        <AuditTrail rows={audit} targetType="license" targetId={key} />
      </Layout>
    );
  },
});

/** The notice after a status change: what the license reads now, which a passed date keeps `expired` (D-32). */
function statusNotice(asked: string, now: string): string {
  if (asked === now) return `License ${now === 'active' ? 'reinstated' : now}.`;
  return (
    `The license reads ${now}: its expiry date has passed, so it stays ${now} until a future expiry date renews ` +
    `it.`
  );
}

/** `POST /admin/licenses/:key/status`: the API's PUT with only `status`. */
export const licenseStatusAction = defineAction({
  path: '/admin/licenses/:key/status',
  form: FORMS.status,
  page: licensePage,
  async run({ deps, params, form, actor }) {
    const body = parseOrThrow(updateLicenseBody, { status: field(form, 'status') }, 'body');
    const updated = await updateLicense(deps.db, params.key!, body, actor);
    return {
      redirect: licenseUrl(updated.license_key),
      notice: statusNotice(body.status!, effectiveStatus(updated, new Date())),
    };
  },
});

/** `POST /admin/licenses/:key`: the API's PUT with maxActivations, expiresAt, heartbeatIntervalSeconds and features. */
export const editLicenseAction = defineAction({
  path: '/admin/licenses/:key',
  form: FORMS.edit,
  page: licensePage,
  async run({ deps, params, form, actor }) {
    const updated = await updateLicense(
      deps.db,
      params.key!,
      parseOrThrow(updateLicenseBody, licenseFields(form, 'cleared'), 'body'),
      actor,
    );
    return { redirect: licenseUrl(updated.license_key), notice: 'License updated.' };
  },
});

/** `POST /admin/licenses/:key/activations/:deviceId/delete`: the API's device removal; the slot is free at once. */
export const removeDeviceAction = defineAction({
  path: '/admin/licenses/:key/activations/:deviceId/delete',
  form: FORMS.device,
  page: licensePage,
  async run({ deps, params, actor }) {
    await removeActivation(deps.db, params.key!, params.deviceId!, actor);
    return { redirect: licenseUrl(normaliseLicenseKey(params.key!)), notice: `Device ${params.deviceId} removed.` };
  },
});

export const licenseDetailRoutes = [licensePage, licenseStatusAction, editLicenseAction, removeDeviceAction];
