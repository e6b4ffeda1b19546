/** The parts of a webhook endpoint's page (webhook-detail.tsx): a delivery's attempts and the one-button forms. */
import type { listDeliveries } from '../../webhooks/service.ts';
import { Form, type FormState } from '../components/Form.tsx';
import { When } from './customers-parts.tsx';

/** Of a response body (kept up to 1 KiB per attempt), what the table shows. */
const EXCERPT = 200;

type Delivery = Awaited<ReturnType<typeof listDeliveries>>['rows'][number];

const excerpt = (text: string | null) => (text && text.length > EXCERPT ? `${text.slice(0, EXCERPT)}…` : (text ?? ''));

/** Every attempt of a delivery, oldest first: status code (or none), duration, the answer's start, the error. */
export function Attempts({ delivery }: { delivery: Delivery }) {
  if (delivery.attempts.length === 0) return <span class="muted">not attempted yet</span>;
  return (
    <ol class="attempts">
      {delivery.attempts.map((a) => (
        <li>
          <span class="nowrap">{a.status_code === null ? 'no answer' : `HTTP ${a.status_code}`}</span> ·{' '}
          <span class="nowrap">{`${a.latency_ms} ms`}</span> · <When value={a.at} />
          {a.response_body ? (
            <>
              {' '}
              · <code class="excerpt">{excerpt(a.response_body)}</code>
            </>
          ) : null}
          {a.error && a.error !== `HTTP ${a.status_code}` ? (
            <>
              {' '}
              · <span class="attempt-error">{a.error}</span>
            </>
          ) : null}
        </li>
      ))}
    </ol>
  );
}

/** A one-button form (C-6: an action is a form with its CSRF field). */
export function ButtonForm({
  name,
  action,
  csrf,
  state,
  submit,
}: {
  name: string;
  action: string;
  csrf: string;
  state?: FormState;
  submit: string;
}) {
  return (
    <Form name={name} action={action} csrf={csrf} state={state} submit={submit}>
      {null}
    </Form>
  );
}
