import type { Knex } from 'knex';

/**
 * GET /files is a cursor list ordered by (created_at desc, id desc) within a company (api/lists.ts
 * cursorList), not by id: the index that serves it is (company_id, created_at, id). It replaces the
 * (company_id, id) index of 20261122000400_files, which no query of files needed (lookups by id use the
 * primary key).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('files', (t) => {
    t.index(['company_id', 'created_at', 'id']);
    t.dropIndex(['company_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('files', (t) => {
    t.index(['company_id', 'id']);
    t.dropIndex(['company_id', 'created_at', 'id']);
  });
}
