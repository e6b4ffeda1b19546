/** Rows every benchmark can use, inserted straight into the bench database before anything is measured. */
import type { Knex } from 'knex';

const PRODUCTS = 1000;
const CUSTOMERS = 1000;

export async function seedRows(knex: Knex): Promise<{ productIds: string[]; customerIds: string[]; planIds: string[] }> {
  const products = Array.from({ length: PRODUCTS }, (_, i) => ({
    name: `Bench Product ${i + 1}`,
    product_type: ['licensed', 'saas', 'api'][i % 3]!,
    description: 'Seeded by bench/fixtures.ts',
    price: `${(i % 100) + 1}.00`,
    currency: 'USD',
  }));
  const customers = Array.from({ length: CUSTOMERS }, (_, i) => ({
    name: `Seeded Customer ${i + 1}`,
    email: `seeded-${i + 1}@bench.test`,
    company: `Company ${i % 50}`,
    tier: ['starter', 'professional', 'enterprise'][i % 3]!,
  }));
  // One statement each: 1000 rows stay far below PostgreSQL's 65535 bind parameters.
  const productRows: Array<{ id: string }> = await knex('products').insert(products).returning('id');
  const customerRows: Array<{ id: string }> = await knex('customers').insert(customers).returning('id');
  const plans = productRows.slice(0, 10).map((p, i) => ({ product_id: p.id, name: `Bench Plan ${i + 1}`, pricing_model: 'flat', billing_cycle: 'monthly', base_price: '29.00', currency: 'USD' }));
  const planRows: Array<{ id: string }> = await knex('plans').insert(plans).returning('id');
  // Fresh statistics, so the planner uses the primary key from the first request on.
  await knex.raw('analyze products, customers, plans');
  return { productIds: productRows.map((r) => r.id), customerIds: customerRows.map((r) => r.id), planIds: planRows.map((r) => r.id) };
}
