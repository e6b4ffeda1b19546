/** What the customer pages share: the profile fields of the create and edit forms, and per-currency amounts. */
import type { CustomerWrite } from '../../customers/repo.ts';
import { CUSTOMER_TIERS, TAX_EXEMPT } from '../../customers/schema.ts';
import type { TaxRateRow } from '../../tax-rates/service.ts';
import { TaxRateChoice } from '../components/TaxRateChoice.tsx';
import type { CurrencyAmount } from '../../invoices/service.ts';
import { money as decimal } from '../../money.ts';
import { Field, kept, type FormState } from '../components/Form.tsx';
import { dateTime, money } from '../components/format.ts';
import { listField, type FormValues } from '../http/form.ts';

/** A customer's tax status in words (T-3). */
export const TAX_STATUS: Record<(typeof TAX_EXEMPT)[number], string> = {
  none: 'Taxable',
  exempt: 'Exempt (no tax)',
  reverse: 'Reverse charge (no tax; the customer accounts for VAT)',
};

/** The currency a customer with no amounts at all is shown in (the API's `creditBalance` is USD, D-22). */
export const DEFAULT_CURRENCY = 'USD';

/**
 * The form's profile fields as the API's JSON: name and email as typed (so an empty one is named), an emptied optional
 * field clears it.
 */
export function customerFields(form: FormValues) {
  const text = (name: string) => (typeof form[name] === 'string' ? (form[name] as string) : undefined);
  const optional = (name: string) => {
    const value = text(name);
    return value === undefined || value.trim() === '' ? null : value;
  };
  return {
    name: text('name'),
    email: text('email'),
    company: optional('company'),
    tier: optional('tier'),
    // A browser posts a textarea's line breaks as CRLF; the API's callers send LF, so the stored text agrees.
    billingAddress: optional('billingAddress')?.replace(/\r\n?/g, '\n') ?? null,
    taxId: optional('taxId'),
    taxExempt: text('taxExempt'),
    taxRateIds: listField(form, 'taxRateIds'),
  };
}

/** The stored profile, as the edit form starts. */
export type ProfileValues = Omit<CustomerWrite, 'payment_method'>;

/**
 * The create and edit forms' fields (console.md: name, email, company, tier, billingAddress, taxId). No
 * `required` or `type=email`: the browser would refuse the post itself, and C-6 wants the service's message.
 */
export function CustomerFields({
  form,
  state,
  current = {},
  rates,
}: {
  form: string;
  state?: FormState;
  current?: ProfileValues;
  /** The tax rates to choose from (T-7). */
  rates: TaxRateRow[];
}) {
  const value = (name: string, stored: string | null | undefined) => kept(state, form, name, stored ?? '');
  const mine = state?.name === form ? state : undefined;
  return (
    <>
      <Field label="Name" name="name" value={value('name', current.name)} state={mine} />
      <Field label="Email" name="email" value={value('email', current.email)} state={mine} />
      <Field label="Company" name="company" value={value('company', current.company)} state={mine} />
      <Field
        label="Tier"
        name="tier"
        options={['', ...CUSTOMER_TIERS]}
        value={value('tier', current.tier)}
        state={mine}
      />
      <Field
        label="Billing address"
        name="billingAddress"
        type="textarea"
        value={value('billingAddress', current.billing_address)}
        state={mine}
      />
      <Field label="Tax ID" name="taxId" value={value('taxId', current.tax_id)} state={mine} />
      <Field
        label="Tax status (exempt: no tax; reverse: reverse charge, needs a tax ID)"
        name="taxExempt"
        options={TAX_EXEMPT}
        value={value('taxExempt', current.tax_exempt)}
        state={mine}
      />
      <TaxRateChoice
        rates={rates}
        chosen={mine ? (listField(mine.values, 'taxRateIds') ?? []) : (current.tax_rate_ids ?? [])}
        state={state}
        form={form}
      />
    </>
  );
}

/** A customer's non-zero credit balances (`creditBalances` of the customer answers) as amounts. */
export function creditAmounts(balances: Record<string, string>): CurrencyAmount[] {
  return Object.entries(balances)
    .filter(([, amount]) => !decimal(amount).isZero())
    .map(([currency, amount]) => ({ currency, amount }));
}

/** Amounts in several currencies, one per line; none reads as zero in the default currency. */
export function Amounts({ amounts }: { amounts: CurrencyAmount[] }) {
  if (amounts.length === 0) return <>{money('0', DEFAULT_CURRENCY)}</>;
  return (
    <span class="amounts">
      {amounts.map((a) => (
        <span>{money(a.amount, a.currency)}</span>
      ))}
    </span>
  );
}

/** A short token (tier, status, kind) that a narrow table column must not break mid-word. */
export const Nowrap = ({ children }: { children: string | number }) => <span class="nowrap">{children}</span>;

/** A timestamp as C-5 shows it, unbroken, with its machine-readable value. */
export function When({ value }: { value: Date | null | undefined }) {
  return value ? (
    <time class="nowrap" dateTime={value.toISOString()}>
      {dateTime(value)}
    </time>
  ) : null;
}
