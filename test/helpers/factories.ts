import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

/** A customer row inserted directly, for tests of other domains. */
export async function insertCustomer(
  db: Knex,
  overrides: Record<string, unknown> = {},
): Promise<{ id: string; email: string; name: string }> {
  const [row] = await db('customers')
    .insert({ name: 'Test Customer', email: `c-${randomUUID()}@example.test`, ...overrides })
    .returning(['id', 'email', 'name']);
  return row;
}
