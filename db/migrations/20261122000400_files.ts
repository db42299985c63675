import type { Knex } from 'knex';

/**
 * Files, their datasets and versions, report requests and quota notices.
 *
 * A file (what GET /files lists) has one dataset: the table that every version of the file holds.
 * Versions are numbered 1, 2, … per file; each names the object in MinIO that holds its bytes.
 * Deleting a file removes its dataset, versions and report rows with it (cascade).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('files', (t) => {
    t.uuid('id').primary(); // UUIDv7: time-ordered, the cursor of GET /files
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.uuid('dataset_id').notNullable().unique();
    t.text('original_name').notNullable();
    // who uploaded the first version; the person stays the uploader if they leave (no FK on purpose)
    t.uuid('uploaded_by_person_id').notNullable();
    t.uuid('uploaded_by_api_key_id');
    t.text('visibility').notNullable().defaultTo('private');
    t.integer('current_version').notNullable().defaultTo(1);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['company_id', 'id']);
  });
  await knex.raw(
    `alter table files add constraint files_visibility_check check (visibility in ('private','company'))`,
  );

  await knex.schema.createTable('datasets', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.uuid('file_id').notNullable().unique().references('files.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('file_versions', (t) => {
    t.uuid('id').primary(); // also names the object: files/<companyId>/<fileId>/<versionId>
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.uuid('file_id').notNullable().references('files.id').onDelete('CASCADE');
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.text('original_name').notNullable();
    t.text('format').notNullable();
    t.text('content_type').notNullable();
    t.text('delimiter'); // CSV/TSV: the delimiter found at upload
    t.bigInteger('size_bytes').notNullable();
    t.text('object_key').notNullable();
    // rows and columns counted at upload (CSV/TSV), or declared by the sheet (XLSX); null when unknown
    t.integer('row_count');
    t.integer('column_count');
    t.uuid('uploaded_by_person_id').notNullable();
    t.uuid('uploaded_by_api_key_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['file_id', 'version']);
  });
  await knex.raw(
    `alter table file_versions add constraint file_versions_format_check check (format in ('xlsx','csv','tsv'))`,
  );
  await knex.raw(`alter table file_versions add constraint file_versions_version_check check (version >= 1)`);

  // One report per file version. This issue only records that a report is wanted ('requested');
  // the analysis work extends the table and the status values (ready, failed, …).
  await knex.schema.createTable('reports', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.uuid('file_id').notNullable().references('files.id').onDelete('CASCADE');
    t.uuid('file_version_id').notNullable().unique().references('file_versions.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.text('status').notNullable().defaultTo('requested');
    t.text('workflow_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['company_id', 'file_id']);
  });

  // quota.threshold is sent once per company, period and threshold (80, 100): the row is the proof
  await knex.schema.createTable('quota_notices', (t) => {
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.text('period_key').notNullable();
    t.integer('threshold').notNullable();
    t.text('plan').notNullable();
    t.integer('files_used').notNullable();
    t.integer('files_limit').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['company_id', 'period_key', 'threshold']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('quota_notices');
  await knex.schema.dropTableIfExists('reports');
  await knex.schema.dropTableIfExists('file_versions');
  await knex.schema.dropTableIfExists('datasets');
  await knex.schema.dropTableIfExists('files');
}
