import type { Knex } from 'knex';

/**
 * The sweep's batches take their invoice numbers in claim order by waiting for their turn in the lifecycle worker
 * (subscriptions/renew-due.ts) before they issue: nothing waits on `renewal_batch_turn` (migration
 * 20261125173000) any more.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists renewal_batch_turn(integer, xid8)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create function renewal_batch_turn(turn integer, before xid8) returns boolean language plpgsql as $fn$
    begin
      if before is not distinct from pg_current_xact_id_if_assigned() then
        return true;
      end if;
      perform pg_advisory_xact_lock_shared(hashtext('renewal_batch_turn'), turn);
      if pg_xact_status(before) is distinct from 'committed' then
        raise exception 'the renewal batch before this one did not commit' using errcode = '40001';
      end if;
      return true;
    end
    $fn$`);
}
