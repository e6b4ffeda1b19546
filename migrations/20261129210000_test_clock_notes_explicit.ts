import type { Knex } from 'knex';

/**
 * Issue 32/39: the test clock is written onto events and emails by the code that records them (events/service.ts
 * recordEvents, emails/outbox.ts queueEmails, from db/clock-scope.ts customerClockIds) instead of by triggers: explicit
 * calls over side effects, and a per-row plpgsql lookup less in every renewal batch's insert.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger emails_note_test_clock on emails;
    drop function emails_note_test_clock();
    drop trigger events_note_test_clock on events;
    drop function events_note_test_clock();
    drop function customer_test_clock(text);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
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
