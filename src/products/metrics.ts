/**
 * The derived product metrics of D-20, refreshed for every product at once by one set-based UPDATE
 * (the `products.refresh-metrics` job runs it every 5 minutes), so reads never aggregate:
 * a product's `metricsRefreshedAt` says when its figures were computed.
 *
 * What each figure counts, as of `asOf`:
 * - monthlyRevenue: the plan prices of the product's `active` subscriptions normalised to a month
 *   (quarterly / 3, yearly / 12). Only `active` counts (D-20): trialing and paused ones are not billing,
 *   past_due ones are failing to pay, canceled ones have stopped; one scheduled to cancel at period end
 *   still pays until then and counts. Only plans in the product's own currency are summed (D-3 never
 *   adds currencies together); revenue of plans in another currency is left out. List prices: coupon
 *   discounts are not subtracted. Summed per cycle first and divided once, so three quarterly plans of
 *   100.00 make exactly 100.00; the output rounds half-up to the currency's minor unit.
 * - activeUsers: distinct customers with an `active` or `trialing` subscription to a plan of the product,
 *   or an `active` license of it that has not passed its `expiresAt` (a license past its date reads
 *   expired at once, D-32, even before the lifecycle job stores it).
 * - dailyActiveUsers: the (license, device) activations of the product's licenses last seen by validate
 *   in the 24 hours up to `asOf`.
 * - churnRate: subscriptions of the product canceled in the 30 days up to `asOf`, divided by those that
 *   existed 30 days before `asOf` and were not canceled by then; 4 decimal places, 0 when nobody was
 *   there to churn. Status history is not kept, so "active 30 days ago" means "created and not yet
 *   canceled" then (a subscription paused or trialing at the time counts). As D-20 words it, the
 *   numerator is every cancellation in the window, including subscriptions created inside it, so the
 *   rate can exceed 1 when new subscriptions churn quickly.
 *
 * The catalog's `updated_at` is left alone: a refresh is not an edit of the product.
 */
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';

export const METRICS_WINDOW_DAU_HOURS = 24;
export const METRICS_WINDOW_CHURN_DAYS = 30;
const HOUR_MS = 3_600_000;

const REFRESH_SQL = `
with
  revenue as (
    select pl.product_id,
           coalesce(sum(pl.base_price) filter (where pl.billing_cycle = 'monthly'), 0)
         + coalesce(sum(pl.base_price) filter (where pl.billing_cycle = 'quarterly'), 0) / 3
         + coalesce(sum(pl.base_price) filter (where pl.billing_cycle = 'yearly'), 0) / 12 as amount
      from subscriptions s
      join plans pl on pl.id = s.plan_id
      join products p on p.id = pl.product_id
     where s.status = 'active' and pl.currency = p.currency
     group by pl.product_id
  ),
  users as (
    select product_id, count(distinct customer_id) as n
      from (select pl.product_id, s.customer_id
              from subscriptions s join plans pl on pl.id = s.plan_id
             where s.status in ('active', 'trialing')
            union all
            select l.product_id, l.customer_id
              from licenses l
             where l.status = 'active' and (l.expires_at is null or l.expires_at > :asOf)) as u
     group by product_id
  ),
  devices as (
    select l.product_id, count(*) as n
      from license_activations a
      join licenses l on l.id = a.license_id
     where a.last_seen_at > :dauSince and a.last_seen_at <= :asOf
     group by l.product_id
  ),
  churn as (
    select pl.product_id,
           count(*) filter (where s.canceled_at > :churnSince and s.canceled_at <= :asOf) as canceled,
           count(*) filter (where s.created_at <= :churnSince
                              and (s.canceled_at is null or s.canceled_at > :churnSince)) as at_start
      from subscriptions s
      join plans pl on pl.id = s.plan_id
     group by pl.product_id
  ),
  metrics as (
    select p.id,
           coalesce(revenue.amount, 0) as monthly_revenue,
           coalesce(users.n, 0) as active_users,
           coalesce(devices.n, 0) as daily_active_users,
           case when coalesce(churn.at_start, 0) = 0 then 0
                else round(churn.canceled::numeric / churn.at_start, 4) end as churn_rate
      from products p
      left join revenue on revenue.product_id = p.id
      left join users on users.product_id = p.id
      left join devices on devices.product_id = p.id
      left join churn on churn.product_id = p.id
  )
update products
   set monthly_revenue = metrics.monthly_revenue,
       active_users = metrics.active_users,
       daily_active_users = metrics.daily_active_users,
       churn_rate = metrics.churn_rate,
       metrics_refreshed_at = :asOf
  from metrics
 where metrics.id = products.id
`;

/**
 * Recomputes every product's metrics as of `asOf` in one statement; answers how many products it
 * refreshed. Two refreshes never run at once (a transaction-scoped advisory lock), so overlapping runs
 * cannot deadlock on product rows locked in different orders; the later one simply follows.
 */
export async function refreshProductMetrics(
  db: Db,
  asOf: Date = new Date(),
): Promise<{ products: number; asOf: Date }> {
  return inTransaction(db, async (trx) => {
    await trx.raw("select pg_advisory_xact_lock(hashtext('products.refresh-metrics'))");
    const dauSince = new Date(asOf.getTime() - METRICS_WINDOW_DAU_HOURS * HOUR_MS);
    const churnSince = new Date(asOf.getTime() - METRICS_WINDOW_CHURN_DAYS * 24 * HOUR_MS);
    const result = await trx.raw<{ rowCount: number }>(REFRESH_SQL, { asOf, dauSince, churnSince });
    return { products: result.rowCount ?? 0, asOf };
  });
}
