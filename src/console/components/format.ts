import { formatMoney } from '../../money.ts';

/** C-5: the decimal string with thousands separators and its currency code; never through a float. */
export function money(amount: string, currency: string): string {
  const text = formatMoney(amount, currency);
  const negative = text.startsWith('-');
  const [whole, fraction] = (negative ? text.slice(1) : text).split('.');
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${grouped}${fraction === undefined ? '' : `.${fraction}`} ${currency}`;
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
