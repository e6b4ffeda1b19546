/**
 * `/portal/licenses` and `/portal/licenses/:id` (P-5): key, status, expiry, features, device limit, and each activated
 * device with `Deactivate` (frees the seat, when `deactivate_devices` is on) and `Download license file` (the offline
 * signed file, D-100/D-101).
 */
import { Form } from '../console/components/Form.tsx';
import { date, dateTime } from '../console/components/format.ts';
import { Table } from '../console/components/Table.tsx';
import { field } from '../console/http/form.ts';
import type { LicenseRow } from '../licenses/repo.ts';
import { effectiveStatus } from '../licenses/status.ts';
import { deactivateDevice, downloadLicenseFile } from '../portal/actions.ts';
import { portalLicense, portalLicenses } from '../portal/records.ts';
import { PortalLayout } from './layout.tsx';
import { portalAction, portalPage, type PortalPageInput } from './route.ts';

const FORMS = { deactivate: 'deactivate', download: 'license-file' } as const;
const licensePath = (id: string) => `/portal/licenses/${id}`;

const STATUS_TEXT: Record<string, string> = {
  active: 'Active',
  expired: 'Expired',
  suspended: 'Suspended',
  revoked: 'Revoked',
};

const statusText = (license: LicenseRow) => STATUS_TEXT[effectiveStatus(license, new Date())] ?? license.status;
const limitText = (license: LicenseRow) =>
  license.max_activations === null ? 'Unlimited' : `${license.current_activations} of ${license.max_activations}`;

function features(license: LicenseRow): string {
  const entries = Object.entries(license.features ?? {});
  return entries.length === 0
    ? 'None'
    : entries.map(([k, v]) => (v === true ? k : `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)).join(', ');
}

export const licensesPage = portalPage({
  path: '/portal/licenses',
  async render({ deps, viewer }) {
    const licenses = await portalLicenses(deps.db, viewer.customerId);
    return (
      <PortalLayout title="Licenses" viewer={viewer} section="Licenses">
        <h1>Licenses</h1>
        <Table
          rows={licenses}
          stack
          empty="No licenses."
          columns={[
            { header: 'Key', cell: (l) => <a href={licensePath(l.id)}>{l.license_key}</a> },
            { header: 'Status', cell: statusText },
            { header: 'Expires', cell: (l) => (l.expires_at ? date(l.expires_at) : 'Never') },
            { header: 'Devices', cell: limitText },
          ]}
        />
      </PortalLayout>
    );
  },
});

async function renderLicense({ deps, params, viewer, notice, state }: PortalPageInput) {
  const { license, activations } = await portalLicense(deps.db, viewer.customerId, params.id!);
  const canDeactivate = viewer.features.has('deactivate_devices');
  return (
    <PortalLayout title={license.license_key} viewer={viewer} section="Licenses" notice={notice}>
      <p class="crumbs">
        <a href="/portal/licenses">Licenses</a>
      </p>
      <h1 class="key">{license.license_key}</h1>
      <section class="card">
        <dl class="facts">
          <dt>Key</dt>
          <dd>
            <code class="id">{license.license_key}</code>
          </dd>
          <dt>Status</dt>
          <dd>{statusText(license)}</dd>
          <dt>Expires</dt>
          <dd>{license.expires_at ? date(license.expires_at) : 'Never'}</dd>
          <dt>Features</dt>
          <dd>{features(license)}</dd>
          <dt>Device limit</dt>
          <dd>{limitText(license)}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="devices-h">
        <h2 id="devices-h">Devices</h2>
        <Table
          rows={activations}
          stack
          empty="No device is activated on this license."
          columns={[
            { header: 'Device', cell: (a) => `${a.device_name || a.device_id}` },
            { header: 'Last seen', cell: (a) => dateTime(a.last_seen_at) },
            {
              header: 'Actions',
              cell: (a) => (
                <div class="row-actions">
                  {canDeactivate ? (
                    <Form
                      name={FORMS.deactivate}
                      scope={a.device_id}
                      action={`${licensePath(license.id)}/deactivate`}
                      csrf={viewer.csrf}
                      state={state?.values.deviceId === a.device_id ? state : undefined}
                      submit="Deactivate"
                    >
                      <input type="hidden" name="deviceId" value={a.device_id} />
                    </Form>
                  ) : null}
                  <Form
                    name={FORMS.download}
                    scope={a.device_id}
                    action={`${licensePath(license.id)}/license-file`}
                    csrf={viewer.csrf}
                    state={state?.values.deviceId === a.device_id ? state : undefined}
                    submit="Download license file"
                  >
                    <input type="hidden" name="deviceId" value={a.device_id} />
                  </Form>
                </div>
              ),
            },
          ]}
        />
      </section>
    </PortalLayout>
  );
}

export const licensePage = portalPage({ path: '/portal/licenses/:id', render: renderLicense });

/** `POST /portal/licenses/:id/deactivate` (deviceId): `Deactivate`, the seat is free at once. */
export const deactivateAction = portalAction({
  path: '/portal/licenses/:id/deactivate',
  form: FORMS.deactivate,
  page: licensePage,
  async run({ deps, params, form, viewer }) {
    const deviceId = field(form, 'deviceId') ?? '';
    const license = await deactivateDevice(deps.db, viewer.actor, params.id!, deviceId);
    return { redirect: licensePath(license.id), notice: `The device ${deviceId} is deactivated; its seat is free.` };
  },
});

/** `POST /portal/licenses/:id/license-file` (deviceId): `Download license file`, signed for that device. */
export const licenseFileAction = portalAction({
  path: '/portal/licenses/:id/license-file',
  form: FORMS.download,
  page: licensePage,
  async run({ deps, params, form, viewer }) {
    const deviceId = field(form, 'deviceId') ?? '';
    const { license, file } = await downloadLicenseFile(deps.db, deps.config, viewer.actor, params.id!, deviceId);
    const safe = (text: string) => text.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80);
    return {
      file: {
        filename: `${safe(license.license_key)}-${safe(deviceId)}.lic`,
        contentType: 'text/plain; charset=utf-8',
        body: file.licenseFile,
      },
    };
  },
});
