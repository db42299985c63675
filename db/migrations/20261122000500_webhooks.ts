import type { Knex } from 'knex';

/**
 * Outgoing webhooks: endpoints (with their encrypted signing secret) and delivery records.
 * A delivery copies the event it sends, so it can be sent again (redelivery) whatever happens to the outbox row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('url').notNullable();
    t.specificType('events', 'text[]').notNullable();
    t.boolean('active').notNullable().defaultTo(true);
    // AES-256-GCM, key derived from SECRET_KEY; the endpoint id is the associated data
    t.text('secret_encrypted').notNullable();
    // failed deliveries in a row; 20 disable the endpoint, a success resets it
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    t.text('disabled_reason');
    t.timestamp('disabled_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['company_id', 'created_at', 'id']);
  });
  await knex.raw(`alter table webhook_endpoints add constraint webhook_endpoints_disabled_reason_check
    check (disabled_reason is null or disabled_reason in ('disabled_by_admin','receiver_gone','consecutive_failures'))`);
  // fan-out looks up the active endpoints of a company subscribed to a type
  await knex.raw(
    `create index webhook_endpoints_active_events on webhook_endpoints using gin (events) where active`,
  );

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.uuid('endpoint_id').notNullable().references('webhook_endpoints.id').onDelete('CASCADE');
    // the outbox row id: sent as webhook-id and as the envelope's id, the same on every retry and redelivery
    t.uuid('event_id').notNullable();
    t.text('event_type').notNullable();
    t.jsonb('event_data').notNullable();
    t.timestamp('event_created_at', { useTz: true }).notNullable();
    // set on a redelivery: the delivery it sends again
    t.uuid('redelivery_of');
    t.text('status').notNullable().defaultTo('pending');
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('response_status');
    t.text('last_error');
    t.timestamp('last_attempt_at', { useTz: true });
    // set once by whoever finishes the delivery: the guard that makes finishing (and counting failures) idempotent
    t.timestamp('completed_at', { useTz: true });
    // null until the delivery workflow is known to be started; the dispatcher starts any left behind
    t.timestamp('workflow_started_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['endpoint_id', 'created_at', 'id']);
    t.index(['created_at']);
  });
  await knex.raw(`alter table webhook_deliveries add constraint webhook_deliveries_status_check
    check (status in ('pending','retrying','succeeded','failed','cancelled'))`);
  // one first delivery per (event, endpoint): a dispatcher that runs a batch twice creates nothing new
  await knex.raw(`create unique index webhook_deliveries_first_unique on webhook_deliveries (event_id, endpoint_id)
    where redelivery_of is null`);
  await knex.raw(`create index webhook_deliveries_not_started on webhook_deliveries (created_at)
    where workflow_started_at is null`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('webhook_deliveries');
  await knex.schema.dropTableIfExists('webhook_endpoints');
}
