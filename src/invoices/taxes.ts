/**
 * Which taxes an invoice carries (taxes.md T-2, T-3) and its prices with them: the rates are resolved here, once,
 * for issuing and the change-plan preview; the arithmetic is pricing/'s. The rates and the customer's exemption are
 * copied onto the invoice (T-5), so what it says never changes afterwards.
 */
import { customerTaxProfiles, type CustomerTaxProfile } from '../customers/service.ts';
import type { Db } from '../db/knex.ts';
import { formatMoney } from '../money.ts';
import { flatRateTaxes, priceTaxedInvoice, proportionalTaxes, type TaxEntry, type TaxTerms } from '../pricing/taxes.ts';
import { priceInvoice, type InvoiceTotals } from '../pricing/totals.ts';
import type { SettingValue } from '../settings/definitions.ts';
import { checkUsableTaxRates, findTaxRates } from '../tax-rates/service.ts';
import type { LineInput } from '../pricing/lines.ts';
import type { InvoiceRow } from './repo.ts';
import type { StoredTax } from './stored-tax.ts';

export type { StoredTax };

/** The note a reverse-charge invoice carries (T-3), with the customer's tax id beside it. */
export const REVERSE_CHARGE_NOTE = 'Reverse charge: VAT to be accounted for by the recipient';

/** What an invoice to price says about its taxes. */
export interface TaxedInput {
  customerId: string;
  currency: string;
  lineItems: LineInput[];
  /** D-51's one percent; the `billing.default_tax_rate` setting when neither it nor a named rate applies. */
  taxRate?: string;
  /**
   * T-2: the rates the caller names for the invoice (an admin's), refused when unknown or archived; each line's own
   * list (`lineItems[i].taxRateIds`, refused alike) wins.
   */
  taxRateIds?: string[];
  /** T-2: a subscription's plan's rates: archived ones apply to nothing; the customer's when it names none. */
  planTaxRateIds?: string[];
}

export interface TaxedPrice {
  totals: InvoiceTotals;
  /** D-51's percent: 0 when named rates (or an exemption) priced the invoice. */
  taxRate: string;
  taxes: TaxEntry[];
  /** The rate ids each line was priced with, in line order. */
  lineRateIds: string[][];
  taxExempt: CustomerTaxProfile['tax_exempt'];
  customerTaxId: string | null;
}

/** Everything pricing a batch of invoices needs, read in three queries for the whole batch. */
export interface TaxContext {
  customers: Map<string, CustomerTaxProfile>;
  rates: Map<string, TaxTerms & { active: boolean }>;
  defaultRateIds: string[];
  defaultTaxRate: string;
}

/** The settings pricing reads (callers read them with their own in one query). */
export const TAX_SETTINGS = ['billing.default_tax_rate', 'billing.default_tax_rate_ids'] as const;
type TaxSettings = { [K in (typeof TAX_SETTINGS)[number]]: SettingValue<K> };

export async function loadTaxContext(
  db: Db,
  inputs: readonly TaxedInput[],
  settings: TaxSettings,
): Promise<TaxContext> {
  const { 'billing.default_tax_rate': defaultTaxRate, 'billing.default_tax_rate_ids': defaultRateIds } = settings;
  const customers = await customerTaxProfiles(
    db,
    inputs.map((i) => i.customerId),
  );
  // Every rate any of them may name, gathered in one set (a sweep batch has hundreds of inputs, most naming none).
  const ids = new Set<string>(defaultRateIds);
  const add = (list: readonly string[] | undefined) => {
    if (list) for (const id of list) ids.add(id);
  };
  for (const customer of customers.values()) add(customer.tax_rate_ids);
  for (const input of inputs) {
    add(input.taxRateIds);
    add(input.planTaxRateIds);
    for (const line of input.lineItems) {
      add(line.taxRateIds);
      add(line.planTaxRateIds);
    }
  }
  const rates = await findTaxRates(db, [...ids]);
  // The rates a caller names are refused when they cannot apply (T-2), from the same read.
  for (const input of inputs) {
    if (input.taxRateIds) checkUsableTaxRates(rates, input.taxRateIds, 'taxRateIds');
    input.lineItems.forEach((line, i) => {
      if (line.taxRateIds) checkUsableTaxRates(rates, line.taxRateIds, `lineItems.${i}.taxRateIds`);
    });
  }
  return { customers, rates, defaultRateIds, defaultTaxRate };
}

const nonEmpty = (ids: string[] | undefined) => (ids && ids.length > 0 ? ids : undefined);

/**
 * T-2..T-5: an exempt or reverse-charge customer's invoice carries no tax; else each line takes its own rates, or
 * the invoice's, or the customer's, or the default setting's (archived rates apply to nothing). An invoice with no
 * named rate on any line is priced by D-51's one percent: its own `taxRate`, else the default setting.
 */
export function priceWithTaxes(input: TaxedInput, context: TaxContext): TaxedPrice {
  const customer = context.customers.get(input.customerId);
  const taxExempt = customer?.tax_exempt ?? 'none';
  const customerTaxId = customer?.tax_id ?? null;
  const untaxed = input.lineItems.map(() => []);
  if (taxExempt !== 'none') {
    const totals = priceInvoice(input.lineItems, '0', input.currency);
    return { totals, taxRate: '0', taxes: [], lineRateIds: untaxed, taxExempt, customerTaxId };
  }
  const customerRates = nonEmpty(customer?.tax_rate_ids) ?? context.defaultRateIds;
  const invoiceRates = input.taxRate
    ? []
    : (nonEmpty(input.taxRateIds) ?? nonEmpty(input.planTaxRateIds) ?? customerRates);
  const lineRates = (line: LineInput) =>
    line.taxRateIds ?? (line.planTaxRateIds ? (nonEmpty(line.planTaxRateIds) ?? customerRates) : invoiceRates);
  const ratesOf = input.lineItems.map((line) =>
    lineRates(line).flatMap((id) => {
      const rate = context.rates.get(id);
      return rate?.active ? [rate] : [];
    }),
  );
  if (ratesOf.some((rates) => rates.length > 0)) {
    const totals = priceTaxedInvoice(input.lineItems, ratesOf, input.currency);
    const lineRateIds = ratesOf.map((rates) => rates.map((r) => r.id));
    return { totals, taxRate: '0', taxes: totals.taxes, lineRateIds, taxExempt, customerTaxId };
  }
  const taxRate = input.taxRate ?? context.defaultTaxRate;
  const totals = priceInvoice(input.lineItems, taxRate, input.currency);
  const taxes = flatRateTaxes(taxRate, totals.subtotal, totals.taxAmount);
  return { totals, taxRate, taxes, lineRateIds: untaxed, taxExempt, customerTaxId };
}

export function storedTaxes(taxes: readonly TaxEntry[], currency: string): StoredTax[] {
  return taxes.map((t) => ({
    ...t,
    taxableAmount: formatMoney(t.taxableAmount, currency),
    amount: formatMoney(t.amount, currency),
  }));
}

/** T-5: the taxes an invoice was priced with; one created before named rates reports its D-51 percent. */
export function invoiceTaxes(
  invoice: Pick<InvoiceRow, 'taxes' | 'tax_exempt' | 'tax_rate' | 'subtotal' | 'tax_amount' | 'currency'>,
): StoredTax[] {
  if (invoice.taxes.length > 0 || invoice.tax_exempt !== 'none') return invoice.taxes;
  return storedTaxes(flatRateTaxes(invoice.tax_rate, invoice.subtotal, invoice.tax_amount), invoice.currency);
}

/** T-3: what a reverse-charge invoice says, with the customer's tax ID it was issued to. */
export function taxNote(invoice: Pick<InvoiceRow, 'tax_exempt' | 'buyer_tax_id'>): string | null {
  if (invoice.tax_exempt !== 'reverse') return null;
  return `${REVERSE_CHARGE_NOTE}. Customer tax ID: ${invoice.buyer_tax_id ?? ''}`;
}

/** T-6: the taxes a credit of `amount` on `invoice` reverses, in proportion to the invoice's total. */
export function creditedTaxes(
  invoice: Parameters<typeof invoiceTaxes>[0] & Pick<InvoiceRow, 'total'>,
  amount: string,
): StoredTax[] {
  const taxes = proportionalTaxes(invoiceTaxes(invoice), amount, invoice.total, invoice.currency);
  return storedTaxes(taxes, invoice.currency);
}
