import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table plans (
      id uuid primary key default gen_random_uuid(),
      product_id uuid not null references products(id) on delete restrict,
      name text not null,
      pricing_model text not null check (pricing_model in ('flat')),
      billing_cycle text not null check (billing_cycle in ('monthly', 'quarterly', 'yearly')),
      base_price numeric not null check (base_price >= 0),
      currency char(3) not null,
      active boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index plans_product on plans (product_id);
    create index plans_created on plans (created_at, id);

    create table coupons (
      id uuid primary key default gen_random_uuid(),
      code text not null,
      percent_off numeric check (percent_off > 0 and percent_off <= 100),
      amount_off numeric check (amount_off > 0),
      currency char(3),
      duration text not null check (duration in ('once', 'repeating', 'forever')),
      duration_in_cycles integer check (duration_in_cycles >= 1),
      max_redemptions integer check (max_redemptions >= 1),
      times_redeemed integer not null default 0,
      expires_at timestamptz,
      created_at timestamptz not null default now(),
      check ((percent_off is null) <> (amount_off is null)),
      check (amount_off is null or currency is not null),
      check ((duration = 'repeating') = (duration_in_cycles is not null)),
      check (max_redemptions is null or times_redeemed <= max_redemptions)
    );
    create unique index coupons_code_lower on coupons (lower(code));
    create index coupons_created on coupons (created_at, id);

    create table subscriptions (
      id uuid primary key default gen_random_uuid(),
      customer_id uuid not null references customers(id) on delete restrict,
      plan_id uuid not null references plans(id) on delete restrict,
      status text not null check (status in ('active', 'paused', 'canceled', 'past_due', 'trialing')),
      billing_cycle text not null check (billing_cycle in ('monthly', 'quarterly', 'yearly')),
      -- Periods are anchor + n cycles (D-43); period_number -1 is a stub before the anchor (a trial,
      -- or the rest of a period after a cycle change), ending at the anchor.
      billing_anchor timestamptz not null,
      period_number integer not null,
      current_period_start timestamptz not null,
      current_period_end timestamptz not null,
      cancel_at_period_end boolean not null default false,
      canceled_at timestamptz,
      paused_at timestamptz,
      trial_end timestamptz,
      coupon_id uuid references coupons(id) on delete restrict,
      coupon_cycles_used integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index subscriptions_customer on subscriptions (customer_id);
    create index subscriptions_plan on subscriptions (plan_id);
    create index subscriptions_created on subscriptions (created_at, id);
    -- The daily sweep finds subscriptions whose period has ended.
    create index subscriptions_due on subscriptions (current_period_end) where status in ('active', 'trialing',
      'past_due');

    alter table invoices add constraint invoices_subscription_fk foreign key (subscription_id) references
      subscriptions(id) on delete restrict;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table invoices drop constraint if exists invoices_subscription_fk;
    drop table if exists subscriptions, coupons, plans cascade;
  `);
}
