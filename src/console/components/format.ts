import { formatMoney, formatUnitPrice, groupDigits } from '../../money.ts';

/** C-5: the decimal string with thousands separators and its currency code; never through a float. */
export function money(amount: string, currency: string): string {
  return grouped(formatMoney(amount, currency), currency);
}

/** An invoice line's unit price as money() shows amounts, with every finer digit it has (money.ts formatUnitPrice). */
export function unitPrice(amount: string, currency: string): string {
  return grouped(formatUnitPrice(amount, currency), currency);
}

function grouped(text: string, currency: string): string {
  return `${groupDigits(text)} ${currency}`;
}

/** C-5: date and time with the zone, UTC. */
export function dateTime(value: Date | string | null | undefined): string {
  if (!value) return '';
  const date = value instanceof Date ? value : new Date(value);
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function date(value: Date | string | null | undefined): string {
  if (!value) return '';
  return (value instanceof Date ? value : new Date(value)).toISOString().slice(0, 10);
}
