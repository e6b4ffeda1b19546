import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * Minimal stand-ins for tables that later migrations add (plans, subscriptions, invoices), created in one test file's own database. They carry just the columns the product
 * and customer queries read, to show those queries pick the tables up once they exist.
 * Foreign keys do not cascade, as a billing schema's would not.
 */
export async function createStandInTables(db: Knex): Promise<void> {
  await db.raw(`
    create table plans (
      id uuid primary key default gen_random_uuid(),
      product_id uuid not null references products(id)
    );
    create table subscriptions (
      id uuid primary key default gen_random_uuid(),
      customer_id uuid not null references customers(id),
      plan_id uuid not null references plans(id),
      status text not null default 'active',
      billing_cycle text not null default 'monthly',
      current_period_start timestamptz not null default now(),
      current_period_end timestamptz not null default now() + interval '1 month',
      cancel_at_period_end boolean not null default false,
      trial_end timestamptz,
      created_at timestamptz not null default now()
    );
    create table invoices (
      id uuid primary key default gen_random_uuid(),
      customer_id uuid not null references customers(id)
    );
  `);
}

export async function subscribe(db: Knex, customerId: string, productId: string): Promise<string> {
  const [plan] = await db('plans').insert({ product_id: productId }).returning('id');
  const [subscription] = await db('subscriptions').insert({ customer_id: customerId, plan_id: plan.id }).returning('id');
  return subscription.id as string;
}

/** A license row in the real licenses table (it exists since the licenses migration). */
export async function license(db: Knex, customerId: string, productId: string): Promise<void> {
  await db('licenses').insert({ customer_id: customerId, product_id: productId, license_key: `T-${randomUUID().slice(0, 18)}` });
}
