import type { Knex } from 'knex';

/**
 * Issue 33: a stored answer is the JSON text the client was sent, not jsonb. PostgreSQL's jsonb refuses `\u0000`
 * (and lone surrogates), which a 400 echoes when a field name holds one; storing it answered a 500. Text holds any
 * JSON, and the replay sends the same bytes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table idempotency_keys alter column response_body type text using response_body::text');
}

export async function down(knex: Knex): Promise<void> {
  // A stored answer jsonb cannot hold is dropped with its key (the key is free again, as after 24 hours).
  await knex.raw(`
    delete from idempotency_keys where response_body like '%\\\\u0000%' or response_body ~* '\\\\ud[89a-f]';
    alter table idempotency_keys alter column response_body type jsonb using response_body::jsonb`);
}
