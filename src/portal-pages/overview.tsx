/** `/portal` (P-3 Overview): the amount due, the subscriptions that run, the next invoice's date. */
import { date, money } from '../console/components/format.ts';
import { portalOverview } from '../portal/records.ts';
import { PortalLayout } from './layout.tsx';
import { portalPage } from './route.ts';
import { STATUS_TEXT } from './subscriptions-parts.tsx';

export const overviewPage = portalPage({
  path: '/portal',
  async render({ deps, viewer, notice }) {
    const { owed, live, nextInvoiceDate } = await portalOverview(deps.db, viewer.customerId);
    return (
      <PortalLayout title="Overview" viewer={viewer} section="Overview" notice={notice}>
        <h1>Overview</h1>
        <section class="card" aria-labelledby="due-h">
          <h2 id="due-h">Amount due</h2>
          {owed.length === 0 ? (
            <p class="amount-due" data-amount-due="0">
              Nothing due
            </p>
          ) : (
            owed.map((o) => (
              <p class="amount-due" data-amount-due={o.amount}>
                {money(o.amount, o.currency)}
              </p>
            ))
          )}
          <p>
            <a href="/portal/invoices">See your invoices</a>
          </p>
        </section>
        <section class="card" aria-labelledby="next-h">
          <h2 id="next-h">Next invoice</h2>
          <p id="next-invoice-date">{nextInvoiceDate ? date(nextInvoiceDate) : 'No invoice is scheduled.'}</p>
        </section>
        <section class="card" aria-labelledby="subs-h">
          <h2 id="subs-h">Active subscriptions</h2>
          {live.length === 0 ? (
            <p class="empty">No active subscription.</p>
          ) : (
            <ul class="plain">
              {live.map(({ sub, plan }) => (
                <li>
                  <a href={`/portal/subscriptions/${sub.id}`}>{plan.name}</a>{' '}
                  <span class="muted">
                    {`${STATUS_TEXT[sub.status]} · ${money(plan.base_price, plan.currency)} / ${plan.billing_cycle}`}
                    {sub.cancel_at_period_end ? ` · ends ${date(sub.current_period_end)}` : ''}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </section>
      </PortalLayout>
    );
  },
});
