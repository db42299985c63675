import type { Knex } from 'knex';
import { disableTenantIsolation, enableTenantIsolation } from '../rls';

/**
 * Quality rules (issue 13) and the sensitive-data findings of each version (names and kinds of flagged
 * columns, never values), with the moment `file.sensitive_data_found` was sent for the version (at most once).
 * Both are tenant tables: row-level security (db/rls.ts) like every table with a company_id.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('rules', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('kind').notNullable();
    // the column name a column rule checks; null for a sheet rule (row_count)
    t.text('column_name');
    t.jsonb('params').notNullable().defaultTo('{}');
    t.text('severity').notNullable().defaultTo('error');
    // exact decimal: compared as a ratio, never as a binary float
    t.decimal('tolerance', 12, 10).notNullable().defaultTo(0);
    t.boolean('active').notNullable().defaultTo(true);
    // null: every file of the company; else only these files
    t.specificType('file_ids', 'uuid[]');
    t.uuid('created_by_person_id').references('people.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['company_id', 'created_at', 'id']);
  });
  await knex.raw(`alter table rules add constraint rules_kind_check check (kind in
    ('not_null','unique','range','length','pattern','allowed_values','type','row_count'))`);
  await knex.raw(
    `alter table rules add constraint rules_severity_check check (severity in ('error','warn'))`,
  );
  await knex.raw(
    `alter table rules add constraint rules_tolerance_check check (tolerance >= 0 and tolerance <= 1)`,
  );

  await knex.schema.createTable('sensitive_findings', (t) => {
    t.uuid('id').primary();
    t.uuid('file_version_id').notNullable().unique().references('file_versions.id').onDelete('CASCADE');
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.uuid('file_id').notNullable().references('files.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    // [{name, kinds: [kind]}] (sheet-qualified names for workbooks), never values
    t.jsonb('columns').notNullable();
    // when file.sensitive_data_found was written to the outbox for this version (once per version)
    t.timestamp('notified_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['company_id', 'file_id']);
  });
  await enableTenantIsolation(knex, 'rules');
  await enableTenantIsolation(knex, 'sensitive_findings');
}

export async function down(knex: Knex): Promise<void> {
  await disableTenantIsolation(knex, 'sensitive_findings');
  await disableTenantIsolation(knex, 'rules');
  await knex.schema.dropTableIfExists('sensitive_findings');
  await knex.schema.dropTableIfExists('rules');
}
