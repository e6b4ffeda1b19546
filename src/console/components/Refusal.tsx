/**
 * C-6: a refused action must be unmistakable. The form that was refused may sit far down its page (a refund
 * beside its payment, store credit below a customer's profile), so the page also opens with a summary of
 * the refusal, linking to the form, which shows the error beside its fields and what was typed.
 */
import { createContext, type VNode } from 'preact';
import { useContext } from 'preact/hooks';
import { ErrorDetails, REFUSED_ID, type FormState } from './Form.tsx';

/** The refusal a page is rendered again with; the layout reads it, so no page has to pass it down. */
const Refusal = createContext<FormState | undefined>(undefined);

/** `page` rendered with `state`'s refusal summarised at the top of its main content. */
export function withRefusal(state: FormState | undefined, page: VNode): VNode {
  return <Refusal.Provider value={state}>{page}</Refusal.Provider>;
}

/** The refusal of the page being rendered, if any (the layout prefixes its title with it). */
export const useRefusal = () => useContext(Refusal);

/** The summary at the top of the page: the service's message and code, each field named, and the way to the form. */
export function RefusalSummary({ state }: { state: FormState }) {
  return (
    <div class="error-summary" role="alert" aria-labelledby="refusal-h">
      <h2 id="refusal-h">Not done: the action was refused</h2>
      <p>
        <strong>{state.error.message}</strong> <code>{state.error.code}</code>
      </p>
      <ErrorDetails state={state} />
      <p><a href={`#${REFUSED_ID}`}>Go to the form</a>; what was typed is kept there.</p>
    </div>
  );
}
