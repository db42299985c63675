import type { Knex } from 'knex';
import { disableTenantIsolation, enableTenantIsolation } from '../rls';

/**
 * Comments on files (issue 15). A comment goes with its file (foreign key, ON DELETE CASCADE): deleting a
 * file deletes its comments. Listed oldest first per file: the index is the list's keyset.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('comments', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.uuid('file_id').notNullable().references('files.id').onDelete('CASCADE');
    // the version the comment is about; null: the file as a whole
    t.integer('version');
    // a removed person's comments stay, without their author
    t.uuid('author_person_id').references('people.id').onDelete('SET NULL');
    t.text('body').notNullable();
    t.timestamp('edited_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['company_id', 'file_id', 'created_at', 'id']);
  });
  await knex.raw(
    `alter table comments add constraint comments_body_length check (char_length(body) between 1 and 5000)`,
  );
  await enableTenantIsolation(knex, 'comments');
}

export async function down(knex: Knex): Promise<void> {
  await disableTenantIsolation(knex, 'comments');
  await knex.schema.dropTableIfExists('comments');
}
