import test from 'ava';
import type { BillingCycle } from '../../src/plans/cycles.ts';
import { addMonthsClamped, periodBounds } from '../../src/subscriptions/periods.ts';

const d = (s: string) => new Date(`${s}T10:30:00.000Z`);
const ymd = (date: Date) => date.toISOString().slice(0, 10);

/** Period ends (boundaries 1..n) for anchors at month ends and leap days, across cycles and years. */
const table: { anchor: string; cycle: BillingCycle; ends: string[] }[] = [
  { anchor: '2024-01-28', cycle: 'monthly', ends: ['2024-02-28', '2024-03-28', '2024-04-28', '2024-05-28'] },
  { anchor: '2024-01-29', cycle: 'monthly', ends: ['2024-02-29', '2024-03-29', '2024-04-29', '2024-05-29'] },
  { anchor: '2025-01-29', cycle: 'monthly', ends: ['2025-02-28', '2025-03-29', '2025-04-29', '2025-05-29'] },
  { anchor: '2025-01-30', cycle: 'monthly', ends: ['2025-02-28', '2025-03-30', '2025-04-30', '2025-05-30'] },
  { anchor: '2024-01-30', cycle: 'monthly', ends: ['2024-02-29', '2024-03-30', '2024-04-30', '2024-05-30'] },
  {
    anchor: '2025-01-31',
    cycle: 'monthly',
    ends: [
      '2025-02-28',
      '2025-03-31',
      '2025-04-30',
      '2025-05-31',
      '2025-06-30',
      '2025-07-31',
      '2025-08-31',
      '2025-09-30',
      '2025-10-31',
      '2025-11-30',
      '2025-12-31',
      '2026-01-31',
      '2026-02-28',
    ],
  },
  { anchor: '2024-01-31', cycle: 'monthly', ends: ['2024-02-29', '2024-03-31', '2024-04-30'] },
  {
    anchor: '2024-02-29',
    cycle: 'monthly',
    ends: [
      '2024-03-29',
      '2024-04-29',
      '2024-05-29',
      '2024-06-29',
      '2024-07-29',
      '2024-08-29',
      '2024-09-29',
      '2024-10-29',
      '2024-11-29',
      '2024-12-29',
      '2025-01-29',
      '2025-02-28',
      '2025-03-29',
    ],
  },
  { anchor: '2025-12-31', cycle: 'monthly', ends: ['2026-01-31', '2026-02-28', '2026-03-31'] },
  {
    anchor: '2024-11-30',
    cycle: 'quarterly',
    ends: [
      '2025-02-28',
      '2025-05-30',
      '2025-08-30',
      '2025-11-30',
      '2026-02-28',
      '2026-05-30',
      '2026-08-30',
      '2026-11-30',
      '2027-02-28',
      '2027-05-30',
      '2027-08-30',
      '2027-11-30',
      '2028-02-29',
    ],
  },
  { anchor: '2025-08-31', cycle: 'quarterly', ends: ['2025-11-30', '2026-02-28', '2026-05-31', '2026-08-31'] },
  { anchor: '2024-01-28', cycle: 'quarterly', ends: ['2024-04-28', '2024-07-28', '2024-10-28', '2025-01-28'] },
  {
    anchor: '2023-11-29',
    cycle: 'quarterly',
    ends: ['2024-02-29', '2024-05-29', '2024-08-29', '2024-11-29', '2025-02-28'],
  },
  {
    anchor: '2024-02-29',
    cycle: 'yearly',
    ends: ['2025-02-28', '2026-02-28', '2027-02-28', '2028-02-29', '2029-02-28', '2032-02-29'].slice(0, 5),
  },
  { anchor: '2024-02-28', cycle: 'yearly', ends: ['2025-02-28', '2026-02-28', '2027-02-28', '2028-02-28'] },
  { anchor: '2023-03-31', cycle: 'yearly', ends: ['2024-03-31', '2025-03-31', '2026-03-31'] },
  { anchor: '2024-12-31', cycle: 'yearly', ends: ['2025-12-31', '2026-12-31', '2027-12-31'] },
];

for (const row of table) {
  test(`${row.cycle} from ${row.anchor}: ${row.ends.length} period ends`, (t) => {
    const anchor = d(row.anchor);
    const ends = row.ends.map((_, i) => periodBounds(anchor, row.cycle, i).end);
    t.deepEqual(ends.map(ymd), row.ends);
    // Time of day is kept, and consecutive periods touch without gaps or overlaps.
    for (const end of ends) t.is(end.toISOString().slice(10), 'T10:30:00.000Z');
    for (let i = 1; i < ends.length; i++) t.deepEqual(periodBounds(anchor, row.cycle, i).start, ends[i - 1]);
  });
}

test('the anchor governs every boundary: a clamped month never shortens later ones', (t) => {
  const anchor = d('2025-01-31');
  t.is(ymd(addMonthsClamped(addMonthsClamped(anchor, 1), 1)), '2025-03-28', 'chaining would drift');
  t.is(ymd(periodBounds(anchor, 'monthly', 1).end), '2025-03-31', 'anchor-based does not');
});

test('negative offsets and year boundaries', (t) => {
  t.is(ymd(addMonthsClamped(d('2025-03-31'), -1)), '2025-02-28');
  t.is(ymd(addMonthsClamped(d('2025-01-15'), -1)), '2024-12-15');
  t.is(ymd(addMonthsClamped(d('2025-01-15'), 24)), '2027-01-15');
});
