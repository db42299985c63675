import type { Knex } from 'knex';

/**
 * The text encoding of a CSV/TSV version (domain/files/encoding.ts): `utf-8`, `windows-1252`, `utf-16le` or
 * `utf-16be`, decided by the upload from every byte; readers convert it to UTF-8 as they read the stored object,
 * which keeps the uploaded bytes. Null for XLSX, and for versions stored before this migration (all UTF-8: the upload refused
 * anything else).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('file_versions', (t) => {
    t.text('encoding');
    t.check(
      `encoding in ('utf-8', 'windows-1252', 'utf-16le', 'utf-16be')`,
      [],
      'file_versions_encoding_check',
    );
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('file_versions', (t) => {
    t.dropChecks('file_versions_encoding_check');
    t.dropColumn('encoding');
  });
}
