import type { Knex } from 'knex';
import { disableTenantIsolation, enableTenantIsolation } from '../rls';

/**
 * Version comparisons (README "Comparisons"). `comparisons`: one row per comparison, automatic (version n
 * against n − 1, started by the upload; unique per target version) or requested (POST /comparisons). The
 * summary (counts, schema changes, per-sheet matching) is JSONB; the row changes are rows of
 * `comparison_changes`, numbered by `seq` in the engine's order (sheet, then row), read a page at a time.
 * Both go with the file (ON DELETE CASCADE).
 * Both are tenant tables: row-level security (db/rls.ts) like every table with a company_id. Named after
 * the row-level security migration (20261123000100) and the rules one (20261123000800).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('comparisons', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.uuid('file_id').notNullable().references('files.id').onDelete('CASCADE');
    t.uuid('base_version_id').notNullable().references('file_versions.id').onDelete('CASCADE');
    t.uuid('target_version_id').notNullable().references('file_versions.id').onDelete('CASCADE');
    t.integer('base_version').notNullable();
    t.integer('target_version').notNullable();
    t.boolean('automatic').notNullable().defaultTo(false);
    t.jsonb('key_columns');
    t.text('status').notNullable().defaultTo('queued');
    t.text('failure_reason');
    t.text('failure_message');
    t.text('phase');
    t.integer('sheets_done');
    t.integer('sheets_total');
    t.bigInteger('changes_saved');
    t.jsonb('result');
    t.bigInteger('change_count');
    t.text('workflow_id');
    t.text('correlation_id');
    t.uuid('requested_by_person_id');
    t.uuid('requested_by_api_key_id');
    t.timestamp('queued_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['company_id', 'file_id']);
  });
  await knex.raw(
    `alter table comparisons add constraint comparisons_status_check check (status in ('queued','comparing','ready','failed'))`,
  );
  await knex.raw(
    `create unique index comparisons_automatic_target on comparisons (target_version_id) where automatic`,
  );
  await knex.schema.createTable('comparison_changes', (t) => {
    t.uuid('comparison_id').notNullable().references('comparisons.id').onDelete('CASCADE');
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.integer('seq').notNullable();
    t.text('sheet').notNullable();
    t.text('kind').notNullable();
    t.jsonb('key');
    t.bigInteger('base_row');
    t.bigInteger('target_row');
    t.jsonb('columns');
    t.primary(['comparison_id', 'seq']);
  });
  await enableTenantIsolation(knex, 'comparisons');
  await enableTenantIsolation(knex, 'comparison_changes');
}

export async function down(knex: Knex): Promise<void> {
  await disableTenantIsolation(knex, 'comparison_changes');
  await disableTenantIsolation(knex, 'comparisons');
  await knex.schema.dropTableIfExists('comparison_changes');
  await knex.schema.dropTableIfExists('comparisons');
}
