import type { Knex } from 'knex';

/**
 * The dialect of a CSV/TSV version is its delimiter and its line-ending rule (common/files/lineEndings.ts:
 * `crlf-lf-cr`, i.e. \r\n, \n and a bare \r each end a record). Recorded per version so every reader (preview,
 * report engine) reads the file as the upload counted it; null for XLSX. Versions stored before this
 * migration were counted by \n only and keep null (readers then apply the current rule).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('file_versions', (t) => {
    t.text('line_endings');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('file_versions', (t) => {
    t.dropColumn('line_endings');
  });
}
