import type { Knex } from 'knex';

/**
 * The sweep's batches take their invoice numbers in claim order (issue 20, docs/decisions.md "Renewal sweep,
 * set-wise"), and a batch's numbering statement now waits for its turn in PostgreSQL instead of in Node: each batch
 * takes an advisory transaction lock of its own when it claims its rows (its `turn`, held until it commits or rolls
 * back), and the next batch's statement, sent as soon as it is written, waits on that lock before it takes numbers.
 * A lock released by a rollback must not let the next batch go first (a worker killed between them would number the
 * later subscriptions before the earlier ones, and a resumed sweep would end differently), so the function also
 * checks that the batch before committed, and fails the statement otherwise (its batch rolls back and is renewed
 * again). Within the same transaction (a sweep run inside a caller's transaction) there is nothing to wait for.
 */
export async function up(knex: Knex): Promise<void> {
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

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists renewal_batch_turn(integer, xid8)');
}
