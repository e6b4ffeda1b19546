interface LineUsage {
  metricCode: string;
  quantity: string;
  tiers: { upTo: string | null; units: string; unitPrice: string; flatFee: string; amount: string }[];
  adjustment?: { billedQuantity: string };
}

/**
 * A usage line's quantity and tiers under its description on the PDF (U-11); empty for other lines. `e` escapes,
 * `amount` formats an amount of the invoice's currency (the template's own).
 */
export function usageDetailHtml(usage: unknown, e: (v: unknown) => string, amount: (v: string) => string): string {
  if (!usage) return '';
  const u = usage as LineUsage;
  const quantity = u.adjustment
    ? `${u.metricCode}: ${u.quantity} now, ${u.adjustment.billedQuantity} billed before`
    : `${u.metricCode}: ${u.quantity}`;
  const tiers = u.tiers.map((t) => {
    const fee = t.flatFee !== '0' ? ` + ${amount(t.flatFee)}` : '';
    const bound = t.upTo === null ? 'above' : `up to ${t.upTo}`;
    return `<li>${e(`${bound}: ${t.units} × ${t.unitPrice}${fee} = ${t.amount}`)}</li>`;
  });
  return `<ul class="usage"><li>${e(quantity)}</li>${tiers.join('')}</ul>`;
}
