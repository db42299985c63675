import type { Knex } from 'knex';
import { disableTenantIsolation, enableTenantIsolation } from '../rls';

/**
 * Notifications (issue 15): one row per recipient, written in the transaction of its cause
 * (domain/notifications). `dedupe_key` names the cause, unique per recipient: a retried activity or a
 * replayed request that reaches the cause again inserts nothing (ON CONFLICT DO NOTHING).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('notifications', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.uuid('person_id').notNullable().references('people.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.text('resource_type').notNullable();
    t.text('resource_id');
    // ids and numbers only, never cell values
    t.jsonb('data').notNullable().defaultTo('{}');
    t.text('dedupe_key').notNullable();
    t.timestamp('read_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['company_id', 'person_id', 'dedupe_key']);
    // the list (newest first per person) and the retention sweep
    t.index(['company_id', 'person_id', 'created_at', 'id']);
    t.index(['created_at']);
  });
  // unread lists and the unread count read only the unread rows
  await knex.raw(
    `create index notifications_unread_idx on notifications (company_id, person_id, created_at, id) where read_at is null`,
  );
  await enableTenantIsolation(knex, 'notifications');
}

export async function down(knex: Knex): Promise<void> {
  await disableTenantIsolation(knex, 'notifications');
  await knex.schema.dropTableIfExists('notifications');
}
