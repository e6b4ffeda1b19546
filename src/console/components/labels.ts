/**
 * What a person reads for the service's raw values (issue 34: `bank_transfer`, `requested_by_customer`, `true`
 * are the API's words, not the finance team's). One place, so every page and form says the same.
 */
const WORDS: Readonly<Record<string, string>> = {
  bank_transfer: 'Bank transfer',
  manual: 'Manual',
  provider_a: 'Card (provider A)',
  provider_b: 'Provider B',
  provider_c: 'Provider C',
  duplicate: 'Duplicate',
  fraudulent: 'Fraudulent',
  requested_by_customer: 'Requested by customer',
  service_issue: 'Service issue',
  other: 'Other',
  partially_refunded: 'Partially refunded',
  past_due: 'Past due',
  true: 'Yes',
  false: 'No',
};

/** The human words for a raw value; a value without words of its own reads with its underscores as spaces. */
export function label(value: string | null | undefined): string {
  if (value === null || value === undefined || value === '') return '';
  const known = WORDS[value];
  if (known) return known;
  const spaced = value.replace(/_/g, ' ');
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** The words of a value the console knows (a method, a reason, a status, yes and no); undefined for any other. */
export const knownWords = (value: unknown): string | undefined =>
  typeof value === 'boolean' ? WORDS[String(value)] : typeof value === 'string' ? WORDS[value] : undefined;

/** The `labels` of a select of these values. */
export const labelsOf = (values: readonly string[]): Record<string, string> =>
  Object.fromEntries(values.map((v) => [v, label(v)]));

/** A status as a badge reads it: the API's word with its underscores as spaces (`past_due` reads "past due"). */
export const statusWords = (value: string): string => value.replace(/_/g, ' ');

/**
 * A field's path as a person reads it: `receivedAt` reads "Received at", `lineItems.0.unitPrice` "Line items 1 unit
 * price".
 */
export function fieldWords(path: string): string {
  const words = path
    .split('.')
    .map((part) =>
      /^\d+$/.test(part)
        ? String(Number(part) + 1)
        : part
            .replace(/_/g, ' ')
            .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
            .toLowerCase(),
    )
    .join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
