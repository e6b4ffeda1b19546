/** What the license pages share: the form fields as the API's JSON (features typed as JSON text) and their inputs. */
import { fieldsRefused } from '../../errors.ts';
import { Field, kept, type FormState } from '../components/Form.tsx';
import { field, numberField, type FormValues } from '../http/form.ts';

/** Activations used over the limit (∞ when unlimited). */
export const usedOfLimit = (used: number, limit: number | null) => `${used} / ${limit ?? '∞'}`;

/** The form names of the license pages' actions. */
export const FORMS = {
  create: 'create-license',
  edit: 'edit-license',
  status: 'license-status',
  device: 'remove-device',
} as const;

/**
 * The features textarea as a value for the API's schema. Empty is no features (`{}`). Text that is not JSON
 * never reaches the schema (the API only ever receives parsed JSON), so it is refused here, naming the field,
 * in the schema's own `Some fields need correcting: <field>: <message>` shape.
 */
function featuresOf(form: FormValues): unknown {
  const text = field(form, 'features');
  if (text === undefined) return {};
  try {
    return JSON.parse(text);
  } catch {
    const message = 'must be a JSON object such as {"pro": true, "seats": 5}; the text typed is not valid JSON';
    throw fieldsRefused([{ path: 'features', message }]);
  }
}

/**
 * The license fields of a form as the API's JSON. A field left empty is absent on create (the API's defaults:
 * unlimited, no expiry, no features) and cleared on edit (unlimited, no expiry, no features), since the edit
 * form starts with the stored values.
 */
export function licenseFields(form: FormValues, emptyMeans: 'absent' | 'cleared') {
  const empty = emptyMeans === 'absent' ? undefined : null;
  return {
    maxActivations: numberField(form, 'maxActivations') ?? empty,
    expiresAt: field(form, 'expiresAt')?.trim() ?? empty,
    features: featuresOf(form),
    heartbeatIntervalSeconds: numberField(form, 'heartbeatIntervalSeconds') ?? empty,
  };
}

/** The stored values the edit form starts with. */
export interface LicenseValues {
  maxActivations: number | null;
  expiresAt: Date | null;
  features: Record<string, unknown>;
  heartbeatIntervalSeconds: number | null;
}

/** The maxActivations, expiresAt, heartbeat interval and features inputs; what was typed comes back after a refusal. */
export function LicenseFields({ form, state, current }: { form: string; state?: FormState; current?: LicenseValues }) {
  const mine = state?.name === form ? state : undefined;
  const stored = {
    maxActivations: current?.maxActivations == null ? '' : String(current.maxActivations),
    expiresAt: current?.expiresAt ? current.expiresAt.toISOString() : '',
    features: current && Object.keys(current.features).length > 0 ? JSON.stringify(current.features, null, 2) : '',
    heartbeatIntervalSeconds: current?.heartbeatIntervalSeconds == null ? '' : String(current.heartbeatIntervalSeconds),
  };
  return (
    <>
      <Field
        label="Max activations (empty: unlimited)"
        name="maxActivations"
        type="number"
        value={kept(mine, form, 'maxActivations', stored.maxActivations)}
        state={mine}
      />
      <Field
        label="Expires at (YYYY-MM-DD or ISO timestamp; empty: never)"
        name="expiresAt"
        value={kept(mine, form, 'expiresAt', stored.expiresAt)}
        state={mine}
      />
      <Field
        label={
          'Heartbeat interval in seconds (10-86400; empty: off). ' +
          'A device silent for twice this is dead and frees its seat.'
        }
        name="heartbeatIntervalSeconds"
        type="number"
        value={kept(mine, form, 'heartbeatIntervalSeconds', stored.heartbeatIntervalSeconds)}
        state={mine}
      />
      <Field
        label='Features (JSON object, e.g. {"pro": true, "seats": 5})'
        name="features"
        type="textarea"
        value={kept(mine, form, 'features', stored.features)}
        state={mine}
      />
    </>
  );
}
