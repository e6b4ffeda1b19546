/** What the webhook pages share: the endpoint form's fields (url, events), an endpoint's health, the URL helpers. */
import { EVENT_TYPES } from '../../events/types.ts';
import type { EndpointHealth } from '../../webhooks/service.ts';
import { ErrorBox, Field, kept, type FormState } from '../components/Form.tsx';
import { dateTime } from '../components/format.ts';
import { field, type FormValues, listField } from '../http/form.ts';
import { uuidParam } from '../http/params.ts';

/** `*` (every event type, present and future) first, then each known type. */
export const EVENT_CHOICES = ['*', ...EVENT_TYPES] as const;

export const webhookUrl = (id: string) => `/admin/webhooks/${id}`;
export const endpointIdOf = (params: Record<string, string>) => uuidParam(params.id, 'Webhook endpoint');

/** The form as the API's JSON (create's and PUT's): url as typed, the ticked events. */
export const endpointFields = (form: FormValues) => ({
  url: field(form, 'url') ?? '',
  events: listField(form, 'events') ?? [],
});

/** The url and events fields, starting from the stored endpoint, or from what was typed before a refusal. */
export function EndpointFields({
  form,
  state,
  current,
}: {
  form: string;
  state?: FormState;
  current?: { url: string; events: string[] };
}) {
  const mine = state?.name === form ? state : undefined;
  const ticked = new Set(mine ? (listField(mine.values, 'events') ?? []) : (current?.events ?? []));
  const invalid = mine?.error?.details?.some((d) => d.path === 'events' || d.path.startsWith('events.'))
    ? true
    : undefined;
  return (
    <>
      <Field label="URL" name="url" value={kept(state, form, 'url', current?.url ?? '')} state={mine} />
      <fieldset class="events" aria-invalid={invalid}>
        <legend>Events</legend>
        {EVENT_CHOICES.map((type, i) => (
          <label class="check">
            <input type="checkbox" name={`events[${i}]`} value={type} checked={ticked.has(type)} />
            {type === '*' ? ' every event (*)' : ` ${type}`}
          </label>
        ))}
      </fieldset>
    </>
  );
}

/** An endpoint's last 24 hours as one line: counts by status, the success rate of the finished ones. */
export function HealthSummary({ health }: { health: EndpointHealth }) {
  const rate = health.successRate === null ? 'no finished deliveries' : `${health.successRate}% delivered`;
  return (
    <span class="health">
      <span class="nowrap">{`${health.delivered} delivered`}</span> ·{' '}
      <span class="nowrap">{`${health.failed} failed`}</span> ·{' '}
      <span class="nowrap">{`${health.pending} pending`}</span> · <span class="nowrap">{rate}</span>
    </span>
  );
}

/** The newest failed attempt among the last 24 hours' deliveries: when, and what came back. */
export function LastFailure({ health }: { health: EndpointHealth }) {
  const failure = health.lastFailure;
  if (!failure) return <span class="muted">none</span>;
  const what = failure.statusCode === null ? (failure.error ?? 'no answer') : `HTTP ${failure.statusCode}`;
  return <span>{`${dateTime(failure.at)}: ${what}`}</span>;
}

/** A refused action whose form is not on this page (a redelivery of a delivery that no longer exists). */
export function OtherFormError({ state, except }: { state?: FormState; except: string[] }) {
  return state && !except.includes(state.name) ? <ErrorBox state={state} /> : null;
}
