import type { TaxRateRow } from '../../tax-rates/service.ts';
import { percentageText } from '../../tax-rates/schema.ts';
import type { FormState } from './Form.tsx';
import { LIST_SHOWN } from '../http/form.ts';

/** A rate as the console names it: `VAT DE 19%`, `(included)` for a price that includes it. */
export function rateLabel(rate: Pick<TaxRateRow, 'name' | 'percentage' | 'inclusive'>): string {
  return `${rate.name} ${percentageText(rate.percentage)}%${rate.inclusive ? ' (included)' : ''}`;
}

/**
 * T-7: the tax rates of a plan or a customer as checkboxes (`taxRateIds[i]`), the active rates and any archived
 * one still chosen; the service's refusal naming `taxRateIds` is shown beside them.
 */
export function TaxRateChoice({
  rates,
  chosen,
  state,
  form,
}: {
  rates: TaxRateRow[];
  chosen: readonly string[];
  state?: FormState;
  form: string;
}) {
  const mine = state?.name === form ? state : undefined;
  const problems = mine?.error?.details?.filter((d) => d.path.startsWith('taxRateIds')) ?? [];
  const shown = rates.filter((r) => r.active || chosen.includes(r.id));
  return (
    <fieldset class="choices" aria-invalid={problems.length > 0 ? true : undefined}>
      <legend>Tax rates</legend>
      {problems.length > 0 ? <span class="field-error">{problems.map((d) => d.message).join('; ')}</span> : null}
      <input type="hidden" name={`taxRateIds[${LIST_SHOWN}]`} value="1" />
      {shown.length === 0 ? (
        <p class="muted">
          No tax rates yet: <a href="/admin/tax-rates">create one</a>.
        </p>
      ) : (
        shown.map((rate, i) => (
          <label class="check">
            <input type="checkbox" name={`taxRateIds[${i}]`} value={rate.id} checked={chosen.includes(rate.id)} />
            {` ${rateLabel(rate)}${rate.active ? '' : ' (archived)'}`}
          </label>
        ))
      )}
    </fieldset>
  );
}
