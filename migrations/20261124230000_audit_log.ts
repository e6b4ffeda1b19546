import type { Knex } from 'knex';

// C-11 audit log: one row per admin action, written in the action's own transaction. Rows are never
// changed or removed (a trigger refuses it), so the log can be trusted as a record of who did what.
// `actor` is what the `?actor=` filter matches besides the email: a user id, `api_key:<id>` or `system`.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table audit_log (
      id uuid primary key default gen_random_uuid(),
      actor text not null,
      actor_email text,
      action text not null,
      target_type text not null,
      target_id text not null,
      before jsonb,
      after jsonb,
      request_id text,
      ip text,
      created_at timestamptz not null default clock_timestamp()
    );
    create index audit_log_created on audit_log (created_at, id);
    create index audit_log_target on audit_log (target_type, target_id, created_at, id);
    create index audit_log_actor on audit_log (actor, created_at, id);
    create index audit_log_actor_email on audit_log (lower(actor_email), created_at, id);

    create function audit_log_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'audit_log rows are never changed or removed';
    end $$;
    create trigger audit_log_append_only before update or delete on audit_log
      for each row execute function audit_log_append_only();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table if exists audit_log;
    drop function if exists audit_log_append_only();
  `);
}
