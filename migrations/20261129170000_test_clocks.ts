import type { Knex } from 'knex';

/**
 * Issue 39 (test-clocks.md): test clocks (TC-1) and the customers on them (TC-2). A customer's clock is set when it
 * is created and never changes. Two triggers carry the clock onto what its customers cause, whichever domain writes
 * it, so no writer has to remember it: an event of a clock customer gets `"testClock": "<id>"` in its data (TC-5,
 * taken before the webhook deliveries are made from the inserted rows), and its emails note their clock so the
 * mailer keeps them `captured`. Clock customers' invoices are numbered by their own counter kind `TST` (D-50 stays
 * gapless for real invoices when a clock and its invoices are deleted; docs/decisions.md, issue 39).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table test_clocks (
      id uuid primary key default uuidv7(),
      name text not null,
      frozen_time timestamptz not null,
      status text not null default 'ready' check (status in ('ready', 'advancing', 'failed')),
      -- While advancing: where it goes, and the last moment whose steps all committed (a restart resumes there).
      advance_target timestamptz,
      advance_cursor timestamptz,
      last_error text,
      deletes_after timestamptz not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index test_clocks_created on test_clocks (created_at, id);

    alter table customers add column test_clock_id uuid references test_clocks(id);
    create index customers_test_clock on customers (test_clock_id, id) where test_clock_id is not null;

    alter table emails add column test_clock_id uuid;

    alter table document_counters drop constraint document_counters_kind_check;
    alter table document_counters add constraint document_counters_kind_check check (kind in ('INV', 'CN', 'TST'));

    create function customer_test_clock(customer text) returns uuid language sql stable as $$
      select c.test_clock_id from customers c
       where customer ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' and c.id = customer::uuid
    $$;

    create function events_note_test_clock() returns trigger language plpgsql as $$
    declare clock uuid;
    begin
      clock := customer_test_clock(new.data->>'customerId');
      if clock is not null then new.data := new.data || jsonb_build_object('testClock', clock::text); end if;
      return new;
    end $$;
    create trigger events_note_test_clock before insert on events
      for each row when ((new.data->>'customerId') is not null) execute function events_note_test_clock();

    create function emails_note_test_clock() returns trigger language plpgsql as $$
    begin
      new.test_clock_id := customer_test_clock(new.customer_id::text);
      return new;
    end $$;
    create trigger emails_note_test_clock before insert on emails
      for each row execute function emails_note_test_clock();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger emails_note_test_clock on emails;
    drop function emails_note_test_clock();
    drop trigger events_note_test_clock on events;
    drop function events_note_test_clock();
    drop function customer_test_clock(text);
    alter table document_counters drop constraint document_counters_kind_check;
    alter table document_counters add constraint document_counters_kind_check check (kind in ('INV', 'CN'));
    alter table emails drop column test_clock_id;
    alter table customers drop column test_clock_id;
    drop table test_clocks;
  `);
}
