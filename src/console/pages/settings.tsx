/**
 * `/admin/settings` (console.md "operations"): every setting of GET /api/settings with its meaning, an edit
 * form validated by the same service as PUT /api/settings, and the API keys (create, shown once; revoke).
 */
import { z } from 'zod';
import { createApiKeyBody } from '../../api-keys/schema.ts';
import { createApiKey, listApiKeys, revokeApiKey } from '../../api-keys/service.ts';
import { customerNames } from '../../customers/service.ts';
import { notFound } from '../../errors.ts';
import { uuid } from '../../http/schemas.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { settingsBody } from '../../settings/schema.ts';
import { describeSettings, updateSettings, type SettingDescription } from '../../settings/service.ts';
import { Field, Form, kept, type FormState } from '../components/Form.tsx';
import { Layout } from '../components/Layout.tsx';
import type { FormValues } from '../http/form.ts';
import { createFormQuery } from '../http/params.ts';
import { takeReveal, revealOnce } from '../http/reveal.ts';
import { servedOverHttps } from '../../http/cookies.ts';
import { defineAction, definePage } from '../http/route.ts';
import { API_KEY_FORMS, apiKeyBody, ApiKeysSection } from './settings-api-keys.tsx';

const PAGE_SIZE = 50;
const SETTINGS_FORM = 'settings';

/** A setting's value as a form shows it: numbers as typed, a list comma-separated, text as it is. */
function asText(value: unknown): string {
  if (Array.isArray(value)) return value.join(', ');
  return value === null || value === undefined ? '' : String(value);
}

/** A number as typed becomes a number; anything else stays text so the service names the field. */
const numberOrText = (text: string) => (/^-?\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : text);

/** The form's text as the JSON value PUT /api/settings takes for a setting of this kind. */
function fromText(kind: SettingDescription['kind'], text: string): unknown {
  if (kind === 'number') return numberOrText(text);
  // A yes/no setting (billing.test_clocks_enabled) is chosen from true/false; anything else stays text to be refused.
  if (kind === 'boolean') return text === 'true' ? true : text === 'false' ? false : text;
  if (kind === 'numbers')
    return text
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean)
      .map(numberOrText);
  return text.replace(/\r\n?/g, '\n');
}

/**
 * The edit form as PUT /api/settings's body: only the settings whose value the admin changed, so untouched
 * settings are not rewritten and a secret left as its mask stays as it is. Settings an environment
 * variable overrides are not in the form (D-12: the variable wins).
 */
function changedSettings(form: FormValues, settings: SettingDescription[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const setting of settings) {
    const text = form[setting.key];
    if (setting.overriddenBy || typeof text !== 'string') continue;
    const value = fromText(setting.kind, text);
    if (JSON.stringify(value) !== JSON.stringify(setting.value)) body[setting.key] = value;
  }
  return body;
}

function SettingsTable({ settings }: { settings: SettingDescription[] }) {
  return (
    <div class="table-wrap words">
      <table>
        <thead>
          <tr>
            <th scope="col">Setting</th>
            <th scope="col">Value</th>
            <th scope="col">Meaning</th>
          </tr>
        </thead>
        <tbody>
          {settings.map((s) => (
            <tr id={`setting-${s.key}`}>
              <td>
                <code>{s.key}</code>
              </td>
              <td>
                {asText(s.value) || <span class="muted">(empty)</span>}
                {s.overriddenBy ? <span class="muted">{` set by ${s.overriddenBy}`}</span> : null}
              </td>
              <td>{s.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function SettingsForm({ settings, csrf, state }: { settings: SettingDescription[]; csrf: string; state?: FormState }) {
  const mine = state?.name === SETTINGS_FORM ? state : undefined;
  const editable = settings.filter((s) => !s.overriddenBy);
  return (
    <details open={Boolean(mine)}>
      <summary>Edit settings</summary>
      <Form name={SETTINGS_FORM} action="/admin/settings" csrf={csrf} state={state} submit="Save settings">
        {editable.map((s) => (
          <Field
            label={s.key}
            name={s.key}
            type={s.secret ? 'password' : s.key === 'company.address' ? 'textarea' : 'text'}
            options={s.kind === 'boolean' ? ['true', 'false'] : undefined}
            value={kept(state, SETTINGS_FORM, s.key, asText(s.value))}
            state={mine}
          />
        ))}
      </Form>
    </details>
  );
}

export const settingsPage = definePage({
  path: '/admin/settings',
  // customerId and create: the page opens the new API key form started for that customer (a customer's "New API key").
  query: z.object({ startingAfter: uuid.optional(), customerId: uuid.optional() }).extend(createFormQuery.shape),
  async render({ deps, ctx, query, viewer, notice, state }) {
    const [settings, keys] = await Promise.all([
      describeSettings(deps.db, deps.config),
      listApiKeys(deps.db, { limit: PAGE_SIZE, startingAfter: query.startingAfter, newestFirst: true }),
    ]);
    const names = await customerNames(
      deps.db,
      keys.rows.map((k) => k.customer_id),
    );
    return (
      <Layout title="Settings" viewer={viewer} section="Settings" notice={notice}>
        <h1>Settings</h1>
        <p>
          Environment variables win over stored values. See also the <a href="/admin/lifecycle">lifecycle sweep</a> and
          its runs, and the <a href="/admin/test-clocks">test clocks</a> (<code>billing.test_clocks_enabled</code>).
          Customer emails: which types are sent (<code>emails.enabled_types</code>), the company details they show (
          <code>company.*</code>), and every email on the <a href="/admin/emails">Emails</a> page.
        </p>
        <section id="settings" aria-labelledby="settings-h">
          <h2 id="settings-h">Settings</h2>
          <SettingsTable settings={settings} />
          <SettingsForm settings={settings} csrf={viewer.csrf} state={state} />
        </section>
        <ApiKeysSection
          rows={keys.rows}
          hasMore={keys.hasMore}
          names={names}
          csrf={viewer.csrf}
          state={state}
          revealed={takeReveal(ctx, servedOverHttps(ctx, deps.config))}
          create={query.create !== undefined ? { customerId: query.customerId } : undefined}
        />
      </Layout>
    );
  },
});

/** `POST /admin/settings`: the changed settings through PUT /api/settings's schema and service. */
export const updateSettingsAction = defineAction({
  path: '/admin/settings',
  form: SETTINGS_FORM,
  page: settingsPage,
  async run({ deps, form, actor }) {
    const body = parseOrThrow(
      settingsBody,
      changedSettings(form, await describeSettings(deps.db, deps.config)),
      'body',
    );
    await updateSettings(deps.db, body, deps.config, actor);
    const changed = Object.keys(body);
    return {
      redirect: '/admin/settings',
      notice: changed.length > 0 ? `Saved: ${changed.join(', ')}.` : 'No setting changed.',
    };
  },
});

/**
 * `POST /admin/api-keys` (customerId, name, expiresAt): POST /api/api-keys's schema and service; the key is shown once.
 */
export const createApiKeyAction = defineAction({
  path: '/admin/api-keys',
  form: API_KEY_FORMS.create,
  page: settingsPage,
  async run({ deps, ctx, form, actor }) {
    const { row, key } = await createApiKey(deps.db, parseOrThrow(createApiKeyBody, apiKeyBody(form), 'body'), actor);
    revealOnce(ctx, servedOverHttps(ctx, deps.config), key);
    return { redirect: '/admin/settings#api-keys', notice: `API key ${row.name} (${row.prefix}…) created.` };
  },
});

/** `POST /admin/api-keys/:id/revoke`: DELETE /api/api-keys/:id's service. */
export const revokeApiKeyAction = defineAction({
  path: '/admin/api-keys/:id/revoke',
  form: API_KEY_FORMS.revoke,
  page: settingsPage,
  async run({ deps, params, actor }) {
    const id = uuid.safeParse(params.id);
    if (!id.success) throw notFound('API key');
    const revoked = await revokeApiKey(deps.db, id.data, actor);
    return { redirect: '/admin/settings#api-keys', notice: `API key ${revoked.name} (${revoked.prefix}…) revoked.` };
  },
});

export const settingsRoutes = [settingsPage, updateSettingsAction, createApiKeyAction, revokeApiKeyAction];
