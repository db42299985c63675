import type { Knex } from 'knex';

/** Audit log (written in the same transaction as each change) and file usage per billing period. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_log', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    // null when the service itself acted (e.g. an automatic webhook disable)
    t.uuid('actor_person_id');
    t.uuid('actor_api_key_id');
    t.text('action').notNullable();
    t.text('resource_type').notNullable();
    t.text('resource_id');
    t.text('correlation_id');
    t.jsonb('details').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['company_id', 'created_at', 'id']);
  });
  await knex.schema.createTable('file_usage', (t) => {
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.text('period_key').notNullable(); // e.g. 2026-11
    t.integer('files_used').notNullable().defaultTo(0);
    t.primary(['company_id', 'period_key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('file_usage');
  await knex.schema.dropTableIfExists('audit_log');
}
