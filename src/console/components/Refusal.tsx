/**
 * C-6: a refused action must be unmistakable. The form that was refused may sit far down its page (a refund
 * beside its payment, store credit below a customer's profile), so the page also opens with a summary of
 * the refusal, linking to the form, which shows the error beside its fields and what was typed.
 */
import { createContext, type VNode } from 'preact';
import { useContext } from 'preact/hooks';
import type { AppError } from '../../errors.ts';
import { ErrorCode, ErrorDetails, REFUSED_ID } from './Form.tsx';

/** The refusal a page is rendered again with; the layout reads it, so no page has to pass it down. */
const Refusal = createContext<AppError | undefined>(undefined);

/** `page` rendered with the refusal `error` summarised at the top of its main content. */
export function withRefusal(error: AppError | undefined, page: VNode): VNode {
  return <Refusal.Provider value={error}>{page}</Refusal.Provider>;
}

/** The refusal of the page being rendered, if any (the layout prefixes its title with it). */
export const useRefusal = () => useContext(Refusal);

/** The summary at the top of the page: the service's message and code, each field named, and the way to the form. */
export function RefusalSummary({ error }: { error: AppError }) {
  return (
    <div class="error-summary" role="alert" aria-labelledby="refusal-h">
      <h2 id="refusal-h">Not done: the action was refused</h2>
      <p>
        <strong>{error.message}</strong> <ErrorCode code={error.code} />
      </p>
      <ErrorDetails error={error} />
      <p>
        <a href={`#${REFUSED_ID}`}>Go to the form</a>; what was typed is kept there.
      </p>
    </div>
  );
}
