import type { Knex } from 'knex';

/**
 * How many lines of a CSV/TSV version come before its header (domain/files/sniff.ts): Excel's separator line
 * (`sep=;`), or a title and notes above the table. Readers skip them (domain/files/separatorHint.ts
 * `tableText`). 0 for a table that starts on line 1; null for XLSX and for versions stored before this migration
 * (read from their first line, as they were).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('file_versions', (t) => {
    t.integer('lines_before_header');
    t.check('lines_before_header >= 0', [], 'file_versions_lines_before_header_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('file_versions', (t) => {
    t.dropChecks('file_versions_lines_before_header_check');
    t.dropColumn('lines_before_header');
  });
}
