import type { Knex } from 'knex';

// Floating seats (D-102). A license may ask its devices to check in every heartbeat_interval_seconds; a device
// silent for twice that is dead and no longer holds a seat. released_at marks a dead device whose seat a new
// device's validate has taken (the row stays until the sweep culls it and tells integrators): a heartbeat or
// refresh in flight for that device then finds the row changed, re-checks it and refuses, so a seat is never
// given twice. current_activations counts the rows that hold a seat (released_at is null).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table licenses add column heartbeat_interval_seconds integer
      check (heartbeat_interval_seconds is null or heartbeat_interval_seconds between 10 and 86400);
    alter table license_activations add column released_at timestamptz;
    -- The sweep walks only the licenses with heartbeats, then each one's devices by last_seen_at.
    create index licenses_heartbeat on licenses (id) where heartbeat_interval_seconds is not null;
    create index license_activations_license_seen on license_activations (license_id, last_seen_at);
    -- Released devices are culled whatever their license's interval is now (it may have been turned off).
    create index license_activations_released on license_activations (license_id) where released_at is not null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index if exists license_activations_released, license_activations_license_seen, licenses_heartbeat;
    alter table license_activations drop column if exists released_at;
    alter table licenses drop column if exists heartbeat_interval_seconds;
  `);
}
