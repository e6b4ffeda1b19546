import { money as decimal, groupDigits } from '../../money.ts';
import { money } from './format.ts';

export interface MonthValue {
  /** `YYYY-MM`. */
  month: string;
  /** A decimal string. */
  amount: string;
}

const WIDTH = 480;
const HEIGHT = 200;
const LEFT = 8;
const TOP = 34;
const BOTTOM = 24;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const monthLabel = (month: string) => MONTHS[Number(month.slice(5, 7)) - 1]!;

/**
 * A bar's value printed above it (issue 34: not only on hover), short enough for its slot: whole units with
 * separators below 10,000, then thousands (12.3k) and millions (1.2M); the exact amount is in the bar's title.
 */
export function barLabel(amount: string): string {
  const value = decimal(amount);
  const size = value.abs();
  if (size.lt(10_000)) return groupDigits(value.toDecimalPlaces(0).toFixed(0));
  if (size.lt(1_000_000)) return `${value.dividedBy(1000).toDecimalPlaces(1).toString()}k`;
  return `${value.dividedBy(1_000_000).toDecimalPlaces(1).toString()}M`;
}

/**
 * A bar per month as an inline SVG (no script, C-8), scaled to its box's width by the viewBox. The
 * amounts stay decimal strings; only bar heights (pixels) become numbers. Screen readers get the title
 * and every bar's month and amount.
 */
export function MonthChart({ title, currency, values }: { title: string; currency: string; values: MonthValue[] }) {
  const amounts = values.map((v) => decimal(v.amount));
  const top = amounts.reduce((a, b) => (b.gt(a) ? b : a), decimal(0));
  const bottom = amounts.reduce((a, b) => (b.lt(a) ? b : a), decimal(0));
  const span = top.minus(bottom);
  const plot = HEIGHT - TOP - BOTTOM;
  const y = (amount: ReturnType<typeof decimal>) =>
    TOP + (span.isZero() ? plot : top.minus(amount).dividedBy(span).times(plot).toNumber());
  const slot = (WIDTH - LEFT) / Math.max(values.length, 1);
  const zero = y(decimal(0));
  const first = values[0]?.month ?? '';
  const last = values.at(-1)?.month ?? '';
  const label = `${title}, ${currency}, ${first} to ${last}`;
  return (
    <figure class="chart-box">
      <figcaption>{`${title}, ${first} to ${last}`}</figcaption>
      <svg class="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label}>
        <title>{label}</title>
        <text x={LEFT} y={14} class="axis">{`max ${money(top.toString(), currency)}`}</text>
        {bottom.lt(0) ? (
          <text x={LEFT} y={HEIGHT - BOTTOM + 2} class="axis">{`min ${money(bottom.toString(), currency)}`}</text>
        ) : null}
        <line x1={LEFT} x2={WIDTH} y1={zero} y2={zero} class="baseline" />
        {values.map((v, i) => {
          const h = y(amounts[i]!);
          const x = LEFT + i * slot;
          return (
            <g>
              <title>{`${v.month}: ${money(v.amount, currency)}`}</title>
              <rect
                class="bar"
                x={x + slot * 0.15}
                width={slot * 0.7}
                y={Math.min(h, zero)}
                height={Math.max(Math.abs(zero - h), amounts[i]!.isZero() ? 0 : 1)}
              />
              <text class="bar-value" x={x + slot / 2} y={Math.min(h, zero) - 3} text-anchor="middle">
                {barLabel(v.amount)}
              </text>
              <text class="month" x={x + slot / 2} y={HEIGHT - 6} text-anchor="middle">
                {monthLabel(v.month)}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
