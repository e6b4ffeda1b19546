import type { Knex } from 'knex';

// License signing keys (issue 21, D-100): Ed25519 key pairs that sign license files. `kid` is the key's
// RFC 7638 JWK thumbprint; `public_key` its raw 32 bytes as base64url (the JWK's `x`). `private_key` is
// PKCS8 PEM when `private_key_encryption` is `none`, else an AES-256-GCM envelope under a key derived
// with scrypt from LICENSE_SIGNING_SECRET (src/licenses/signing-key-crypto.ts). The current key is the
// one not rotated: the partial unique index allows one, so two processes creating the first key at once
// (two release steps) keep only one.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table license_signing_keys (
      kid text primary key,
      public_key text not null,
      private_key text not null,
      private_key_encryption text not null check (private_key_encryption in ('none', 'scrypt-aes-256-gcm')),
      created_at timestamptz not null default now(),
      rotated_at timestamptz
    );
    create unique index license_signing_keys_one_current on license_signing_keys ((true)) where rotated_at is null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists license_signing_keys');
}
