/**
 * The finance reports (console.md C-16): `/admin/reports/aging` (open invoices by days past due, each bucket a link
 * to its invoices) and `/admin/reports/revenue` (per month: invoiced, collected, refunded, credit-noted, net, MRR at
 * month end and its change), with the revenue report's CSV.
 */
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import {
  type AgingBucket,
  agingReport,
  currentReport,
  type RevenueMonth,
  revenueReport,
} from '../../reports/service.ts';
import { dateTime, money } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { Table } from '../components/Table.tsx';
import { defineExport, definePage } from '../http/route.ts';

const BUCKET_WORDS: Record<AgingBucket, string> = {
  current: 'Current (not yet due)',
  '1-30': '1-30 days past due',
  '31-60': '31-60 days past due',
  '61-90': '61-90 days past due',
  '90+': 'Over 90 days past due',
};

/** The reports' own links, on each report and the overview (the navigation keeps console.md's list, C-3). */
export function ReportLinks() {
  return (
    <p class="report-links">
      Reports: <a href="/admin/reports/aging">Aging</a> · <a href="/admin/reports/revenue">Revenue</a>
    </p>
  );
}

export const agingPage = definePage({
  path: '/admin/reports/aging',
  async render({ deps, viewer, notice }) {
    const report = await currentReport(deps.db, 'aging', () => agingReport(deps.db));
    return (
      <Layout title="Aging report" viewer={viewer} section="Overview" notice={notice}>
        <h1>Aging report</h1>
        <ReportLinks />
        <p class="muted">
          {`Open invoices (issued and overdue) by whole days past their due date, as of ${dateTime(report.asOf)}.`}
        </p>
        {report.currencies.length === 0 ? (
          <p class="empty">No open invoices: nothing is owed.</p>
        ) : (
          report.currencies.map((c) => (
            <section aria-labelledby={`aging-${c.currency}`}>
              <h2 id={`aging-${c.currency}`}>{c.currency}</h2>
              <div class="wide">
                <Table
                  rows={[...c.buckets, { bucket: 'total' as const, count: c.count, amount: c.total }]}
                  empty="No open invoices."
                  columns={[
                    {
                      header: 'Days past due',
                      cell: (b) =>
                        b.bucket === 'total' ? (
                          <strong>Total</strong>
                        ) : (
                          <a href={`/admin/invoices?aging=${encodeURIComponent(b.bucket)}&currency=${c.currency}`}>
                            {BUCKET_WORDS[b.bucket]}
                          </a>
                        ),
                    },
                    { header: 'Invoices', numeric: true, cell: (b) => String(b.count) },
                    { header: 'Amount due', numeric: true, cell: (b) => money(b.amount, c.currency) },
                  ]}
                />
              </div>
            </section>
          ))
        )}
      </Layout>
    );
  },
});

const monthText = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'must be a month YYYY-MM');
const MAX_MONTHS = 36;

/** `from`/`to` months (both included); the last 12 months by default; at most 36 months. */
const revenueQuery = z.object({ from: monthText.optional(), to: monthText.optional() });

function monthRange(query: z.output<typeof revenueQuery>, now = new Date()) {
  const to = query.to ?? now.toISOString().slice(0, 7);
  const end = new Date(`${to}-01T00:00:00Z`);
  const from =
    query.from ?? new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth() - 11, 1)).toISOString().slice(0, 7);
  const span =
    (end.getUTCFullYear() - Number(from.slice(0, 4))) * 12 + end.getUTCMonth() + 1 - Number(from.slice(5, 7));
  if (span < 0 || span >= MAX_MONTHS) {
    const message = span < 0 ? 'must not be after `to`' : `must be at most ${MAX_MONTHS} months before \`to\``;
    throw new AppError('invalid_request', `The report's months: from ${message}`, {
      details: [{ path: 'from', message }],
    });
  }
  return { from, to };
}

const percent = (p: string | null) => (p === null ? '—' : `${p.startsWith('-') ? '' : '+'}${p}%`);

export const revenuePage = definePage({
  path: '/admin/reports/revenue',
  query: revenueQuery,
  async render({ deps, viewer, notice, query }) {
    const { from, to } = monthRange(query);
    const report = await currentReport(deps.db, `revenue ${from} ${to}`, () => revenueReport(deps.db, from, to));
    return (
      <Layout title="Revenue report" viewer={viewer} section="Overview" notice={notice}>
        <h1>Revenue report</h1>
        <ReportLinks />
        <form method="get" action="/admin/reports/revenue" class="filters">
          <p class="field">
            <label for="revenue-from">From month</label>
            <input id="revenue-from" name="from" type="month" value={from} />
          </p>
          <p class="field">
            <label for="revenue-to">To month</label>
            <input id="revenue-to" name="to" type="month" value={to} />
          </p>
          <button type="submit">Show</button>
        </form>
        <p class="export">
          <a href={`/admin/reports/revenue/export.csv?from=${from}&to=${to}`} download>
            Export CSV
          </a>
        </p>
        <p class="muted">
          Collected counts payments by the day received; net is collected less refunded. MRR is at each month's end.
        </p>
        {report.currencies.length === 0 ? (
          <p class="empty">No revenue in these months.</p>
        ) : (
          report.currencies.map((c) => (
            <section aria-labelledby={`revenue-${c.currency}`}>
              <h2 id={`revenue-${c.currency}`}>{c.currency}</h2>
              <div class="wide">
                <Table
                  rows={c.months}
                  empty="No months."
                  columns={[
                    { header: 'Month', cell: (m: RevenueMonth) => m.month },
                    { header: 'Invoiced', numeric: true, cell: (m) => money(m.invoiced, c.currency) },
                    { header: 'Collected', numeric: true, cell: (m) => money(m.collected, c.currency) },
                    { header: 'Refunded', numeric: true, cell: (m) => money(m.refunded, c.currency) },
                    { header: 'Credit-noted', numeric: true, cell: (m) => money(m.creditNoted, c.currency) },
                    { header: 'Net', numeric: true, cell: (m) => money(m.net, c.currency) },
                    {
                      header: 'MRR at month end',
                      numeric: true,
                      cell: (m) => (m.mrr ? money(m.mrr, c.currency) : '—'),
                    },
                    { header: 'MRR change', numeric: true, cell: (m) => percent(m.mrrChangePercent) },
                  ]}
                />
              </div>
            </section>
          ))
        )}
      </Layout>
    );
  },
});

export const revenueExport = defineExport({
  path: '/admin/reports/revenue/export.csv',
  filename: 'revenue.csv',
  query: revenueQuery,
  header: [
    'month',
    'currency',
    'invoiced',
    'collected',
    'refunded',
    'creditNoted',
    'net',
    'mrrAtMonthEnd',
    'mrrChangePercent',
  ],
  async *rows({ deps, query }) {
    const { from, to } = monthRange(query);
    const report = await revenueReport(deps.db, from, to);
    for (const c of report.currencies)
      for (const m of c.months)
        yield [
          m.month,
          c.currency,
          m.invoiced,
          m.collected,
          m.refunded,
          m.creditNoted,
          m.net,
          m.mrr,
          m.mrrChangePercent,
        ];
  },
});

export const reportRoutes = [agingPage, revenueExport, revenuePage];
