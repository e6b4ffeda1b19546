import { randomUUID } from 'node:crypto';
import { createContext, type ComponentChildren } from 'preact';
import { useContext } from 'preact/hooks';
import { fieldWords, label as words } from './labels.ts';
import type { AppError } from '../../errors.ts';
import type { FormValues } from '../http/form.ts';

/**
 * What a posted form brings back to its page: what was typed, and the service's error when the action was
 * refused (C-6). Without an error the form is only shown again, as a form that grows does (invoice lines).
 */
export interface FormState {
  /** Which form on the page was posted (a page may hold several). */
  name: string;
  error?: AppError;
  values: FormValues;
  /** Set when the action asks for confirmation first: what it will do. */
  confirming?: string;
}

/** The id of the refused form's error on its page, where the page's refusal summary links (Refusal.tsx). */
export const REFUSED_ID = 'refused';

/** The API's code of a refusal (C-6), kept for support and the API's readers, after the words and in smaller type. */
export const ErrorCode = ({ code }: { code: string }) => (
  <span class="error-code">
    (error code <code>{code}</code>)
  </span>
);

/** Each field the service's error names, with why, the field named in words. */
export function ErrorDetails({ error }: { error: AppError }) {
  return error.details?.length ? (
    <ul>
      {error.details.map((d) => (
        <li>{d.path ? `${fieldWords(d.path)}: ${d.message}` : d.message}</li>
      ))}
    </ul>
  ) : null;
}

/**
 * The service's message and code (C-6) at the top of the refused form; each field the error names shows its
 * reason beside it (`Field`), and the page's refusal summary lists them all. Not an alert itself: the summary
 * is, and one announcement of the message is enough.
 */
export function ErrorBox({ state }: { state: FormState }) {
  const { error } = state;
  if (!error) return null;
  return (
    <div class="error" id={REFUSED_ID} tabindex={-1}>
      <p>
        <strong>{error.message}</strong> <ErrorCode code={error.code} />
      </p>
    </div>
  );
}

/**
 * The prefix of the ids of a form's fields. Forms on one page share field names (a product's edit form, its
 * "New plan" form and each plan's edit form all have `name`), so an id from the name alone would repeat and
 * a label would point at another form's input (C-8).
 */
const FieldIds = createContext('f');

/**
 * A form posting to `action` with the CSRF field; shows the error when `state` is this form's. `scope` tells
 * apart the forms of one name that a page repeats (a refund form per payment, an edit form per plan).
 */
export function Form({
  name,
  action,
  csrf,
  state,
  submit,
  scope,
  more,
  once,
  children,
}: {
  name: string;
  action: string;
  csrf: string;
  state?: FormState;
  submit: string;
  scope?: string;
  /** Buttons after the submit button, which stays first: the form's default, the one Enter presses. */
  more?: ComponentChildren;
  /** A form that moves money carries a one-time token (C-13): its resubmit records nothing new. */
  once?: boolean;
  children: ComponentChildren;
}) {
  const mine = state?.name === name ? state : undefined;
  const button = <button type="submit">{mine?.confirming ? `Confirm: ${submit}` : submit}</button>;
  return (
    <form method="post" action={action} class="form">
      <input type="hidden" name="_csrf" value={csrf} />
      <input type="hidden" name="_form" value={name} />
      {once ? <input type="hidden" name="_once" value={randomUUID()} /> : null}
      {mine ? <ErrorBox state={mine} /> : null}
      {mine?.confirming ? <ConfirmBox text={mine.confirming} /> : null}
      <FieldIds.Provider value={scope ? `f-${name}-${scope}` : `f-${name}`}>{children}</FieldIds.Provider>
      {more ? (
        <div class="buttons">
          {button}
          {more}
        </div>
      ) : (
        button
      )}
    </form>
  );
}

/**
 * What an action that cannot be undone will do, asked before it runs (a refund, marking paid, a cancellation):
 * the form comes back with this text and `confirm=yes`, and only its second submit acts. Works without script.
 */
function ConfirmBox({ text }: { text: string }) {
  return (
    <div class="confirm" role="alert">
      <p>
        <strong>Please confirm.</strong> {text}
      </p>
      <input type="hidden" name="confirm" value="yes" />
    </div>
  );
}

/** The value typed before a refusal, else the given one. */
export function kept(state: FormState | undefined, form: string, name: string, fallback = ''): string {
  if (state?.name !== form) return fallback;
  const value = state.values[name];
  return typeof value === 'string' ? value : fallback;
}

/**
 * A labelled input (C-8), its id unique on the page (`FieldIds`); when the service's error names the field,
 * it is marked invalid with the reason beside it.
 */
export function Field({
  label,
  name,
  value,
  type = 'text',
  required,
  state,
  options,
  labels,
}: {
  label: string;
  name: string;
  value?: string;
  type?: string;
  required?: boolean;
  state?: FormState;
  options?: readonly string[];
  /** What a person reads for each option (`requested_by_customer` reads "Requested by customer"). */
  labels?: Readonly<Record<string, string>>;
}) {
  const id = `${useContext(FieldIds)}-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  const problems = state?.error?.details?.filter((d) => d.path === name || d.path.startsWith(`${name}.`)) ?? [];
  const invalid = problems.length > 0 ? true : undefined;
  const describedBy = invalid ? `${id}-error` : undefined;
  return (
    <p class="field">
      <label for={id}>{label}</label>
      {invalid ? (
        <span class="field-error" id={describedBy}>
          {problems.map((d) => d.message).join('; ')}
        </span>
      ) : null}
      {options ? (
        <select id={id} name={name} aria-invalid={invalid} aria-describedby={describedBy}>
          {options.map((o) => (
            <option value={o} selected={o === value}>
              {o === '' ? '—' : (labels?.[o] ?? words(o))}
            </option>
          ))}
        </select>
      ) : type === 'textarea' ? (
        <textarea id={id} name={name} aria-invalid={invalid} aria-describedby={describedBy}>
          {value}
        </textarea>
      ) : (
        <input
          id={id}
          name={name}
          type={type as 'text'}
          value={value}
          required={required}
          aria-invalid={invalid}
          aria-describedby={describedBy}
        />
      )}
    </p>
  );
}
