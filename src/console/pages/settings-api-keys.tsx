/** The API keys part of `/admin/settings`: every key newest first, create (the key shown once) and revoke. */
import type { ApiKeyRow } from '../../api-keys/repo.ts';
import { ErrorBox, Field, Form, kept, type FormState } from '../components/Form.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { field, type FormValues } from '../http/form.ts';
import { createFormUrl } from '../http/params.ts';
import { When } from './customers-parts.tsx';

/** The form names of this section (the `_form` field), so a refusal is shown beside the right form. */
export const API_KEY_FORMS = { create: 'api-key-create', revoke: 'api-key-revoke' } as const;

/** The create form as the API's JSON body (POST /api/api-keys): name, customerId, an optional expiresAt. */
export function apiKeyBody(form: FormValues) {
  return {
    name: field(form, 'name') ?? '',
    customerId: field(form, 'customerId'),
    expiresAt: field(form, 'expiresAt'),
  };
}

/** The settings page with the new API key form open and started for a customer (the customer page's "New API key"). */
export const newApiKeyUrl = (customerId: string) => createFormUrl('/admin/settings', API_KEY_FORMS.create, customerId);

function keyStatus(key: ApiKeyRow, now: Date): string {
  if (key.revoked_at) return 'revoked';
  return key.expires_at && key.expires_at <= now ? 'expired' : 'active';
}

/** The key just created, shown this once: it is neither stored by the service nor shown again. */
function NewKey({ secret }: { secret: string }) {
  return (
    <div class="notice reveal" role="status">
      <p>
        <strong>Copy the new API key now: it is not shown again.</strong>
      </p>
      <p>
        <code class="secret">{secret}</code>
      </p>
    </div>
  );
}

export function ApiKeysSection({
  rows,
  hasMore,
  names,
  csrf,
  state,
  revealed,
  create,
}: {
  rows: ApiKeyRow[];
  hasMore: boolean;
  names: Map<string, string>;
  csrf: string;
  state?: FormState;
  revealed?: string;
  /** The create form is asked for open, started for this customer (`?create=1&customerId=`). */
  create?: { customerId?: string };
}) {
  const now = new Date();
  const creating = state?.name === API_KEY_FORMS.create ? state : undefined;
  return (
    <section id="api-keys" aria-labelledby="api-keys-h">
      <h2 id="api-keys-h">API keys</h2>
      {revealed ? <NewKey secret={revealed} /> : null}
      {state?.name === API_KEY_FORMS.revoke ? <ErrorBox state={state} /> : null}
      <details id={API_KEY_FORMS.create} open={creating || create ? true : undefined}>
        <summary>New API key</summary>
        <Form name={API_KEY_FORMS.create} action="/admin/api-keys" csrf={csrf} state={state} submit="Create API key">
          <Field
            label="Customer ID"
            name="customerId"
            value={kept(state, API_KEY_FORMS.create, 'customerId', create?.customerId ?? '')}
            state={creating}
          />
          <Field label="Name" name="name" value={kept(state, API_KEY_FORMS.create, 'name')} state={creating} />
          <Field
            label="Expires at (optional, ISO date or time)"
            name="expiresAt"
            value={kept(state, API_KEY_FORMS.create, 'expiresAt')}
            state={creating}
          />
        </Form>
      </details>
      <div class="words">
        <Table
          rows={rows}
          empty="No API keys yet."
          next={nextPageUrl('/admin/settings', {}, rows.at(-1)?.id, hasMore)}
          columns={[
            { header: 'Name', cell: (k) => k.name },
            {
              header: 'Customer',
              cell: (k) => (
                <a href={`/admin/customers/${k.customer_id}`}>{names.get(k.customer_id) ?? k.customer_id}</a>
              ),
            },
            { header: 'Prefix', cell: (k) => <code class="nowrap">{k.prefix}</code> },
            { header: 'Created', cell: (k) => <When value={k.created_at} /> },
            { header: 'Last used', cell: (k) => <When value={k.last_used_at} /> },
            { header: 'Expires', cell: (k) => <When value={k.expires_at} /> },
            { header: 'Status', cell: (k) => <span class="status">{keyStatus(k, now)}</span> },
            {
              header: 'Revoke',
              cell: (k) =>
                k.revoked_at ? (
                  ''
                ) : (
                  <form method="post" action={`/admin/api-keys/${k.id}/revoke`} class="inline">
                    <input type="hidden" name="_csrf" value={csrf} />
                    <input type="hidden" name="_form" value={API_KEY_FORMS.revoke} />
                    <button type="submit" aria-label={`Revoke ${k.name}`}>
                      Revoke
                    </button>
                  </form>
                ),
            },
          ]}
        />
      </div>
    </section>
  );
}
