/**
 * T-4 and T-5 as properties over random lines, quantities, rates and inclusive/exclusive mixes, against the exact
 * fractions of reference.ts: each rate's tax summed unrounded and rounded once, the per-rate amounts adding up to
 * taxAmount, total = subtotal + taxAmount, an inclusive-only invoice's total the sum of its gross lines, every figure
 * in the currency's minor units. Plus the worked rounding case.
 */
import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import { minorUnits } from '../../src/money.ts';
import { priceTaxedInvoice, proportionalTaxes, type TaxTerms } from '../../src/pricing/taxes.ts';
import {
  CURRENCIES,
  currency,
  decimal,
  fraction,
  integer,
  minus,
  over,
  plus,
  rounded,
  times,
  type Fraction,
} from './reference.ts';

const RATES: TaxTerms[] = [
  { id: 'vat-de', name: 'VAT DE', percentage: '19', inclusive: false },
  { id: 'gst', name: 'GST', percentage: '10', inclusive: false },
  { id: 'odd', name: 'Odd', percentage: '7.1234', inclusive: false },
  { id: 'vat-fr-incl', name: 'VAT FR', percentage: '20', inclusive: true },
  { id: 'vat-at-incl', name: 'VAT AT', percentage: '12.5', inclusive: true },
];
const exclusive = RATES.filter((r) => !r.inclusive);
const inclusive = RATES.filter((r) => r.inclusive);

/** A line's rates: some exclusive ones and at most one inclusive (T-2). */
const lineRates = fc
  .tuple(fc.subarray(exclusive), fc.option(fc.constantFrom(...inclusive), { nil: undefined }))
  .map(([ex, inc]) => (inc ? [inc, ...ex] : ex));

const line = fc.record({
  description: fc.constant('line'),
  quantity: fc.integer({ min: 1, max: 10_000 }),
  unitPrice: decimal(4, 10n ** 7n, { negative: false }),
});

const toFixed = (value: Fraction, digits: number) => rounded(value, digits);
const sum = (values: Fraction[]) => values.reduce(plus, integer(0));

/** The reference of T-4, in exact fractions: each rate's tax summed unrounded over the invoice, rounded once. */
function reference(lines: { quantity: number; unitPrice: string }[], ratesOf: TaxTerms[][], digits: number) {
  const amounts = lines.map((l) => fraction(rounded(times(integer(l.quantity), fraction(l.unitPrice)), digits)));
  const taxes = new Map<string, Fraction>();
  amounts.forEach((gross, i) => {
    const rates = ratesOf[i]!;
    const inc = rates.find((r) => r.inclusive);
    const net = inc ? over(gross, plus(integer(1), over(fraction(inc.percentage), integer(100)))) : gross;
    if (inc) taxes.set(inc.id, plus(taxes.get(inc.id) ?? integer(0), minus(gross, net)));
    for (const r of rates.filter((x) => !x.inclusive))
      taxes.set(r.id, plus(taxes.get(r.id) ?? integer(0), over(times(net, fraction(r.percentage)), integer(100))));
  });
  const roundedTaxes = new Map([...taxes].map(([id, tax]) => [id, toFixed(tax, digits)]));
  const inclusiveTax = sum([...roundedTaxes].filter(([id]) => id.endsWith('-incl')).map(([, t]) => fraction(t)));
  const subtotal = minus(sum(amounts), inclusiveTax);
  const taxAmount = sum([...roundedTaxes.values()].map(fraction));
  return { roundedTaxes, subtotal, taxAmount, total: plus(subtotal, taxAmount), gross: sum(amounts) };
}

test('T-4/T-5: per-rate taxes rounded once each, adding up to taxAmount; total = subtotal + tax', (t) => {
  fc.assert(
    fc.property(currency, fc.array(fc.tuple(line, lineRates), { minLength: 1, maxLength: 8 }), (code, drawn) => {
      const digits = CURRENCIES[code];
      const lines = drawn.map(([l]) => l);
      const ratesOf = drawn.map(([, r]) => r);
      const priced = priceTaxedInvoice(lines, ratesOf, code);
      const expected = reference(lines, ratesOf, digits);
      assert.deepEqual(
        new Map(priced.taxes.map((e) => [e.taxRateId, e.amount.toFixed(digits)])),
        expected.roundedTaxes,
      );
      const perRate = priced.taxes.reduce((s, e) => s.plus(e.amount), priced.taxAmount.minus(priced.taxAmount));
      assert.equal(perRate.toFixed(digits), priced.taxAmount.toFixed(digits));
      assert.equal(priced.subtotal.toFixed(digits), toFixed(expected.subtotal, digits));
      assert.equal(priced.taxAmount.toFixed(digits), toFixed(expected.taxAmount, digits));
      assert.equal(priced.total.toFixed(digits), priced.subtotal.plus(priced.taxAmount).toFixed(digits));
      assert.equal(priced.total.toFixed(digits), toFixed(expected.total, digits));
      for (const figure of [priced.subtotal, priced.taxAmount, priced.total, ...priced.taxes.map((e) => e.amount)])
        assert.ok(figure.decimalPlaces() <= minorUnits(code), figure.toString());
      for (const e of priced.taxes) assert.ok(e.taxableAmount.decimalPlaces() <= minorUnits(code));
    }),
  );
  t.pass();
});

test('T-4: an invoice of inclusive rates only totals the sum of its gross line amounts', (t) => {
  fc.assert(
    fc.property(
      currency,
      fc.array(fc.tuple(line, fc.constantFrom(...inclusive)), { minLength: 1, maxLength: 8 }),
      (code, drawn) => {
        const digits = CURRENCIES[code];
        const lines = drawn.map(([l]) => l);
        const priced = priceTaxedInvoice(
          lines,
          drawn.map(([, r]) => [r]),
          code,
        );
        const gross = reference(
          lines,
          drawn.map(([, r]) => [r]),
          digits,
        ).gross;
        assert.equal(priced.total.toFixed(digits), toFixed(gross, digits));
        // The rounded net of each inclusive rate is its gross less its rounded tax.
        for (const e of priced.taxes) assert.ok(e.taxableAmount.plus(e.amount).decimalPlaces() <= digits);
      },
    ),
  );
  t.pass();
});

test('T-4: three lines of 0.05 at 10% exclusive give tax 0.02 (rounded once per rate), not 0.03', (t) => {
  const gst = RATES.find((r) => r.id === 'gst')!;
  const lines = [1, 2, 3].map((n) => ({ description: `Item ${n}`, quantity: 1, unitPrice: '0.05' }));
  const priced = priceTaxedInvoice(lines, [[gst], [gst], [gst]], 'USD');
  t.is(priced.taxAmount.toFixed(2), '0.02');
  t.is(priced.subtotal.toFixed(2), '0.15');
  t.is(priced.total.toFixed(2), '0.17');
  t.like(priced.taxes[0], { taxRateId: 'gst', name: 'GST', percentage: '10', inclusive: false });
  t.is(priced.taxes[0]!.taxableAmount.toFixed(2), '0.15');
});

test('T-4: 119.00 with 19% included is 100.00 net and 19.00 tax; the total stays 119.00', (t) => {
  const vat = { id: 'v', name: 'VAT DE', percentage: '19', inclusive: true };
  const priced = priceTaxedInvoice([{ description: 'Pro', quantity: 1, unitPrice: '119.00' }], [[vat]], 'USD');
  t.is(priced.subtotal.toFixed(2), '100.00');
  t.is(priced.taxAmount.toFixed(2), '19.00');
  t.is(priced.total.toFixed(2), '119.00');
  t.is(priced.taxes[0]!.taxableAmount.toFixed(2), '100.00');
});

test('T-6: a credit of part of an invoice carries that share of each tax; of the whole, all of it', (t) => {
  const taxes = [
    { taxRateId: 'a', name: 'A', percentage: '19', inclusive: false, taxableAmount: '100.00', amount: '19.00' },
    { taxRateId: 'b', name: 'B', percentage: '10', inclusive: false, taxableAmount: '100.00', amount: '10.00' },
  ];
  const half = proportionalTaxes(taxes, '64.50', '129.00', 'USD');
  t.deepEqual(
    half.map((e) => [e.taxableAmount.toFixed(2), e.amount.toFixed(2)]),
    [
      ['50.00', '9.50'],
      ['50.00', '5.00'],
    ],
  );
  const all = proportionalTaxes(taxes, '129.00', '129.00', 'USD');
  t.deepEqual(
    all.map((e) => e.amount.toFixed(2)),
    ['19.00', '10.00'],
  );
});
