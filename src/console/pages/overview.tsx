import { render as renderToString } from 'preact-render-to-string';
import { currentRevenueMetrics, type CurrencyMetrics, type RevenueMetrics } from '../../metrics/service.ts';
import { formatMoney, money as decimal } from '../../money.ts';
import { date, dateTime, money } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { MonthChart } from '../components/MonthChart.tsx';
import { Table } from '../components/Table.tsx';
import { definePage } from '../http/route.ts';
import { ReportLinks } from './reports.tsx';

function Card({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <div class="card">
      <div class="label">{label}</div>
      <div class="value">{value}</div>
      {note ? <div class="label">{note}</div> : null}
    </div>
  );
}

/** MRR at the start of this month: the end of the previous one (the series' second-to-last point). */
const startMrr = (m: CurrencyMetrics) => m.series.at(-2)?.mrr ?? formatMoney('0', m.currency);

/** The change of MRR since the start of the month in percent, one decimal; none from zero. */
function growthNote(m: CurrencyMetrics): string {
  const start = decimal(startMrr(m));
  if (start.isZero()) return 'growth: n/a from 0';
  const change = decimal(m.mrr).minus(start).dividedBy(start).times(100).toDecimalPlaces(1);
  return `growth: ${change.gt(0) ? '+' : ''}${change.toFixed(1)}%`;
}

/** C-18: start + new + expansion - contraction - churn = end, written out so it can be checked by eye. */
function movementsSentence(m: CurrencyMetrics): string {
  const c = m.currency;
  const v = m.movements;
  return (
    `${money(startMrr(m), c)} + ${money(v.new, c)} new + ${money(v.expansion, c)} expansion − ` +
    `${money(v.contraction, c)} contraction − ${money(v.churn, c)} churn = ${money(m.mrr, c)}`
  );
}

/** One currency's figures: never added to another currency's (D-3). */
function CurrencySection({ m }: { m: CurrencyMetrics }) {
  const c = m.currency;
  return (
    <section aria-labelledby={`cur-${c}`}>
      <h2 id={`cur-${c}`}>{c}</h2>
      <div class="cards tight">
        <Card label="MRR" value={money(m.mrr, c)} />
        <Card label="ARR" value={money(m.arr, c)} />
        <Card label="Active subscriptions" value={String(m.activeSubscriptions)} note="active and past due" />
        <Card label="Trialing" value={String(m.trialingSubscriptions)} />
        <Card label="Outstanding" value={money(m.outstanding, c)} note="issued and overdue invoices" />
        <Card
          label="Overdue"
          value={money(m.overdueAmount, c)}
          note={`${m.overdueCount} ${m.overdueCount === 1 ? 'invoice' : 'invoices'}`}
        />
        <Card label="Collected this month" value={money(m.collectedThisMonth, c)} note="payments less refunds" />
      </div>
      <h3>MRR movements this month</h3>
      <p class="movements">{movementsSentence(m)}</p>
      <div class="cards tight">
        <Card label="Start of month" value={money(startMrr(m), c)} note={growthNote(m)} />
        <Card label="New" value={money(m.movements.new, c)} />
        <Card label="Expansion" value={money(m.movements.expansion, c)} />
        <Card label="Contraction" value={money(m.movements.contraction, c)} />
        <Card label="Churn" value={money(m.movements.churn, c)} />
      </div>
      <div class="charts">
        <MonthChart
          title="MRR at each month end"
          currency={c}
          values={m.series.map((s) => ({ month: s.month, amount: s.mrr }))}
        />
        <MonthChart
          title="Collected per month"
          currency={c}
          values={m.series.map((s) => ({ month: s.month, amount: s.collected }))}
        />
      </div>
    </section>
  );
}

/** Everything the overview shows of the figures: a function of the metrics alone (nothing of who is looking). */
function Figures({ metrics }: { metrics: RevenueMetrics }) {
  return (
    <>
      <p class="muted">
        As of {dateTime(metrics.at)}. MRR counts active and past-due subscriptions at their next invoice's price,
        normalised to a month.
      </p>
      {metrics.currencies.length === 0 ? (
        <p class="empty">No revenue yet: no subscriptions, invoices or payments.</p>
      ) : (
        metrics.currencies.map((m) => <CurrencySection m={m} />)
      )}
      <h2>Most overdue invoices</h2>
      <Table
        rows={metrics.mostOverdue}
        empty="No invoice is overdue."
        columns={[
          { header: 'Number', cell: (i) => <a href={`/admin/invoices/${i.id}`}>{i.number}</a> },
          { header: 'Customer', cell: (i) => <a href={`/admin/customers/${i.customerId}`}>{i.customerName}</a> },
          { header: 'Amount due', numeric: true, cell: (i) => money(i.amountDue, i.currency) },
          { header: 'Due date', cell: (i) => date(i.dueDate) },
        ]}
      />
    </>
  );
}

/**
 * The figures rendered once per metrics value: currentRevenueMetrics answers the same object while its cache holds
 * (until an event or the month moves a figure), and rendering them was most of a view's work (issue 34,
 * bench/profile/console-pages.ts: 1.07 ms of rendering a view, 0.37 ms of it the charts' decimal arithmetic; the
 * page at 515 req/s, 0.11 of the select ceiling). Only the layout (who is signed in) is rendered per view. The
 * HTML is preact's own escaped output, kept as it was rendered.
 */
const renderedFigures = new WeakMap<RevenueMetrics, string>();

function figuresHtml(metrics: RevenueMetrics): string {
  let html = renderedFigures.get(metrics);
  if (html === undefined) {
    html = renderToString(<Figures metrics={metrics} />);
    renderedFigures.set(metrics, html);
  }
  return html;
}

/** `/admin` (console.md, money table): the revenue figures of GET /api/metrics/revenue, per currency. */
export const overviewPage = definePage({
  path: '/admin',
  async render({ deps, viewer, notice }) {
    const metrics = await currentRevenueMetrics(deps.db);
    return (
      <Layout title="Overview" viewer={viewer} section="Overview" notice={notice}>
        <h1>Overview</h1>
        <ReportLinks />
        <div class="figures" dangerouslySetInnerHTML={{ __html: figuresHtml(metrics) }} />
      </Layout>
    );
  },
});

export const overviewRoutes = [overviewPage];
