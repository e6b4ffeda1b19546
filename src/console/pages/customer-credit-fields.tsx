import { DEFAULT_CURRENCY, ISO_4217_CODES } from '../../money.ts';
import { Field, kept, type FormState } from '../components/Form.tsx';

/**
 * The grant form's fields: amount, currency and description. The currency is chosen among the customer's own
 * (C-14: those of their invoices and subscriptions), never typed; credit in another could never be spent.
 */
export function CreditFields({ state, currencies }: { state?: FormState; currencies: string[] }) {
  const mine = state?.name === 'credit' ? state : undefined;
  // A customer billed in nothing yet: credit for a first invoice, in any currency (USD offered first).
  const offered =
    currencies.length > 0 ? currencies : [DEFAULT_CURRENCY, ...ISO_4217_CODES.filter((c) => c !== DEFAULT_CURRENCY)];
  return (
    <>
      <Field label="Amount" name="amount" value={kept(state, 'credit', 'amount')} state={mine} />
      <Field
        label="Currency"
        name="currency"
        options={offered}
        value={kept(state, 'credit', 'currency', offered[0])}
        state={mine}
      />
      <Field label="Description" name="description" value={kept(state, 'credit', 'description')} state={mine} />
    </>
  );
}
