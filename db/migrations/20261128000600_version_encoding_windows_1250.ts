import type { Knex } from 'knex';

/**
 * A CSV/TSV version's encoding may also be `windows-1250` (Excel's "CSV" on Windows in Central Europe;
 * domain/files/encoding.ts `eightBitEncoding`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table file_versions drop constraint file_versions_encoding_check');
  await knex.raw(
    `alter table file_versions add constraint file_versions_encoding_check
       check (encoding in ('utf-8', 'windows-1252', 'windows-1250', 'macintosh', 'utf-16le', 'utf-16be'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`update file_versions set encoding = 'windows-1252' where encoding = 'windows-1250'`);
  await knex.raw('alter table file_versions drop constraint file_versions_encoding_check');
  await knex.raw(
    `alter table file_versions add constraint file_versions_encoding_check
       check (encoding in ('utf-8', 'windows-1252', 'macintosh', 'utf-16le', 'utf-16be'))`,
  );
}
