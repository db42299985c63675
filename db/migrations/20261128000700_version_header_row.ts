import type { Knex } from 'knex';

/**
 * The row a spreadsheet program shows a CSV/TSV version's header on (domain/files/sniff.ts): 1, or more when a
 * title or notes come before it — Excel's separator line is no row there (Excel hides it), so it is
 * `lines_before_header + 1` less one for that line. Row numbers (failing rows, comparison changes) count from
 * it as a spreadsheet shows them. Null for XLSX (a sheet numbers its own rows) and for versions stored before it:
 * read as 1, so their rows are numbered from the header as when their reports and comparisons were made (a
 * version stored with a separator line cannot be told from one with a title here).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('file_versions', (t) => {
    t.integer('header_row');
    t.check('header_row >= 1', [], 'file_versions_header_row_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('file_versions', (t) => {
    t.dropChecks('file_versions_header_row_check');
    t.dropColumn('header_row');
  });
}
