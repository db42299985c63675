import type { Knex } from 'knex';

/**
 * Google sign-in and the demo.
 * - people.google_subject: the provider's stable subject, recorded at the first Google sign-in; later
 *   sign-ins match on it (an address can change at Google, the subject cannot).
 * - oauth_states: a pending authorization between POST /auth/oauth/google/url and the provider's callback.
 *   It exists before anyone is signed in, so it has no company (one_time_tokens requires one). The state
 *   itself is stored only as a fingerprint.
 * - companies.is_demo: marks the one demo company (at most one, enforced by a unique partial index).
 * - demo_seed_steps: which steps of the demo's sample data were applied, so a step added later (files,
 *   webhooks...) is applied to a demo company that already exists.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('people', (t) => {
    t.text('google_subject');
  });
  await knex.raw(
    `create unique index people_google_subject_unique on people (google_subject) where google_subject is not null`,
  );

  await knex.schema.createTable('oauth_states', (t) => {
    t.uuid('id').primary();
    t.text('provider').notNullable(); // google
    t.text('state_fingerprint').notNullable().unique();
    t.text('code_verifier').notNullable();
    t.text('nonce').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['expires_at']);
  });

  await knex.schema.alterTable('companies', (t) => {
    t.boolean('is_demo').notNullable().defaultTo(false);
  });
  await knex.raw(`create unique index companies_one_demo on companies (is_demo) where is_demo`);

  await knex.schema.createTable('demo_seed_steps', (t) => {
    // deleting the demo company (an operator's reset) forgets its steps, so the next opening seeds afresh
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.timestamp('applied_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['company_id', 'name']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('demo_seed_steps');
  await knex.raw('drop index if exists companies_one_demo');
  await knex.schema.alterTable('companies', (t) => {
    t.dropColumn('is_demo');
  });
  await knex.schema.dropTableIfExists('oauth_states');
  await knex.raw('drop index if exists people_google_subject_unique');
  await knex.schema.alterTable('people', (t) => {
    t.dropColumn('google_subject');
  });
}
