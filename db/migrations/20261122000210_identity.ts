import type { Knex } from 'knex';

/**
 * Sessions (a refresh-token family), their refresh tokens (stored as HMAC fingerprints; a reused, already
 * rotated token ends the whole session), API keys (fingerprint only) and one-time tokens (activation,
 * password reset, invitation, OAuth exchange code).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sessions', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.uuid('person_id').notNullable().references('people.id').onDelete('CASCADE');
    t.boolean('demo').notNullable().defaultTo(false);
    t.text('method').notNullable().defaultTo('password'); // password | invitation | google | demo
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('ended_at', { useTz: true });
    t.text('end_reason'); // logout | refresh_token_reused | password_reset | person_removed
    t.index(['person_id']);
  });

  await knex.schema.createTable('refresh_tokens', (t) => {
    t.uuid('id').primary();
    t.uuid('session_id').notNullable().references('sessions.id').onDelete('CASCADE');
    t.text('token_fingerprint').notNullable().unique();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    // set when this token was exchanged for a new pair; presenting it again ends the session
    t.timestamp('rotated_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['session_id']);
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.uuid('person_id').notNullable().references('people.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    // the public identifier part of svc_live_<identifier>_<secret>, used to find the key
    t.text('identifier').notNullable().unique();
    t.text('secret_fingerprint').notNullable();
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['company_id', 'created_at']);
  });

  await knex.schema.createTable('one_time_tokens', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.uuid('person_id').references('people.id').onDelete('CASCADE');
    t.text('purpose').notNullable(); // activation | password_reset | invitation | oauth_exchange
    t.text('token_fingerprint').notNullable().unique();
    t.jsonb('data').notNullable().defaultTo('{}');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['person_id', 'purpose']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('one_time_tokens');
  await knex.schema.dropTableIfExists('api_keys');
  await knex.schema.dropTableIfExists('refresh_tokens');
  await knex.schema.dropTableIfExists('sessions');
}
