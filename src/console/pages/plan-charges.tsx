/**
 * Usage charges on the create-plan form and the product page (issue 35, U-3/U-4): a few charge rows posted as
 * `charges[i][...]`, turned into the API's JSON (a row without a metric is left out). Tiers are typed one per line,
 * `upTo unitPrice [flatFee]`, the last line's upTo `inf` (no limit).
 */
import type { ChargeWithMetric } from '../../metering/charges.ts';
import type { MetricRow } from '../../metering/service.ts';
import { CHARGE_MODELS } from '../../pricing/usage.ts';
import { Field, type FormState } from '../components/Form.tsx';
import { money, unitPrice } from '../components/format.ts';
import type { FormValues } from '../http/form.ts';

const CHARGE_ROWS = 2;

const rowsOf = (form: FormValues): FormValues[] => (Array.isArray(form.charges) ? (form.charges as FormValues[]) : []);
const text = (row: FormValues, name: string) => {
  const v = row[name];
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
};

/** The metric codes the form's charge rows name (the action looks their ids up). */
export const chargeCodes = (form: FormValues): string[] =>
  rowsOf(form).flatMap((row) => (text(row, 'metric') ? [text(row, 'metric')!] : []));

/** `upTo unitPrice [flatFee]` per line; `inf` (or `-`) for the open last tier. */
function tiersOf(typed: string | undefined) {
  if (typed === undefined) return undefined;
  return typed
    .split(/\r?\n/)
    .map((line) => line.trim().split(/\s+/))
    .filter((parts) => parts[0] !== '')
    .map(([upTo, price, flatFee]) => ({
      upTo: upTo === 'inf' || upTo === '-' ? null : upTo,
      unitPrice: price,
      ...(flatFee ? { flatFee } : {}),
    }));
}

/** The form's charge rows as the API's `charges` (absent when none); `ids` maps metric codes to ids. */
export function chargeFields(form: FormValues, ids: Map<string, string>) {
  const charges = rowsOf(form)
    .filter((row) => text(row, 'metric'))
    .map((row) => {
      const code = text(row, 'metric')!;
      const size = text(row, 'packageSize');
      return {
        metricId: ids.get(code) ?? code,
        model: text(row, 'model'),
        unitPrice: text(row, 'unitPrice'),
        freeUnits: text(row, 'freeUnits'),
        packageSize: size === undefined ? undefined : Number(size),
        packagePrice: text(row, 'packagePrice'),
        tiers: tiersOf(text(row, 'tiers')),
      };
    });
  return charges.length > 0 ? charges : undefined;
}

/** The charge rows of the create-plan form. */
export function ChargeRows({ form, state, metrics }: { form: string; state?: FormState; metrics: MetricRow[] }) {
  const mine = state?.name === form ? state : undefined;
  const typed = mine ? rowsOf(mine.values) : [];
  const value = (i: number, name: string, fallback = '') => {
    const v = typed[i]?.[name];
    return typeof v === 'string' ? v : fallback;
  };
  return (
    <>
      {Array.from({ length: CHARGE_ROWS }, (_, i) => (
        <fieldset class="charge">
          <legend>{`Usage charge ${i + 1} (usage and hybrid plans)`}</legend>
          <Field
            label="Metric"
            name={`charges[${i}][metric]`}
            options={['', ...metrics.map((m) => m.code)]}
            value={value(i, 'metric')}
          />
          <Field label="Model" name={`charges[${i}][model]`} options={CHARGE_MODELS} value={value(i, 'model')} />
          <Field label="Unit price (per_unit)" name={`charges[${i}][unitPrice]`} value={value(i, 'unitPrice')} />
          <Field label="Free units" name={`charges[${i}][freeUnits]`} value={value(i, 'freeUnits')} />
          <Field label="Package size" name={`charges[${i}][packageSize]`} value={value(i, 'packageSize')} />
          <Field label="Package price" name={`charges[${i}][packagePrice]`} value={value(i, 'packagePrice')} />
          <Field
            label="Tiers: one per line, upTo unitPrice [flatFee]; last upTo inf"
            name={`charges[${i}][tiers]`}
            type="textarea"
            value={value(i, 'tiers')}
          />
        </fieldset>
      ))}
    </>
  );
}

/** One charge in a sentence: `api_calls: graduated (0-1000 at 0, then 0.0015 ...)`. */
export function chargeSummary(charge: ChargeWithMetric, currency: string): string {
  const free = charge.free_units ? `, ${charge.free_units} free` : '';
  switch (charge.model) {
    case 'per_unit':
      return `${charge.metric.code}: ${unitPrice(charge.unit_price!, currency)} per unit${free}`;
    case 'package':
      return `${charge.metric.code}: ${money(charge.package_price!, currency)} per ${charge.package_size}${free}`;
    default: {
      const tiers = (charge.tiers ?? [])
        .map((t) => `${t.upTo === null ? '∞' : `≤${t.upTo}`} at ${t.unitPrice}${t.flatFee ? ` + ${t.flatFee}` : ''}`)
        .join('; ');
      return `${charge.metric.code}: ${charge.model} (${tiers})`;
    }
  }
}
