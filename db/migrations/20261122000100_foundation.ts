import type { Knex } from 'knex';

/**
 * Companies, people and the transactional outbox.
 * Tenant-owned tables carry company_id; everything is timestamptz; ids are UUID text.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('companies', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable();
    t.text('status').notNullable().defaultTo('active');
    // null until the company chooses a plan (work that needs a plan answers 402 meanwhile)
    t.text('plan');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `alter table companies add constraint companies_status_check check (status in ('active','suspended'))`,
  );
  await knex.raw(
    `alter table companies add constraint companies_plan_check check (plan is null or plan in ('free','basic','premium'))`,
  );

  await knex.schema.createTable('people', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.text('role').notNullable();
    t.text('status').notNullable().defaultTo('not_activated');
    t.text('password_hash');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['company_id', 'created_at']);
  });
  await knex.raw(`alter table people add constraint people_role_check check (role in ('admin','employee'))`);
  await knex.raw(
    `alter table people add constraint people_status_check check (status in ('not_activated','active','disabled'))`,
  );
  // one login per address across the service ("an address already registered" is a 409)
  await knex.raw(`create unique index people_email_unique on people (lower(email))`);

  await knex.schema.createTable('outbox', (t) => {
    t.uuid('id').primary(); // the event id, sent as webhook-id
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.text('type').notNullable();
    t.jsonb('data').notNullable();
    t.text('correlation_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('dispatched_at', { useTz: true });
  });
  await knex.raw(`create index outbox_unsent on outbox (created_at, id) where dispatched_at is null`);
  // Wake the dispatcher when an event commits (NOTIFY is delivered at commit, never on rollback).
  await knex.raw(`
    create function outbox_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('outbox', '');
      return null;
    end $$;
  `);
  await knex.raw(
    `create trigger outbox_notify after insert on outbox for each statement execute function outbox_notify()`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists outbox_notify on outbox');
  await knex.raw('drop function if exists outbox_notify()');
  await knex.schema.dropTableIfExists('outbox');
  await knex.schema.dropTableIfExists('people');
  await knex.schema.dropTableIfExists('companies');
}
