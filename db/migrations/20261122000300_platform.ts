import type { Knex } from 'knex';

/**
 * Request budget counters and Idempotency-Key records, shared by every API copy.
 *
 * rate_limit_counters has the exact shape rate-limiter-flexible's PostgreSQL store expects (key, points,
 * expire in epoch ms). It is UNLOGGED: counters live one minute, so skipping the write-ahead log is worth
 * it (each request writes one row); after a crash PostgreSQL empties the table, which only resets budgets.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create unlogged table rate_limit_counters (
      key varchar(255) primary key,
      points integer not null default 0,
      expire bigint
    )`);
  await knex.raw(`create index rate_limit_counters_expire on rate_limit_counters (expire)`);

  await knex.schema.createTable('idempotency_keys', (t) => {
    // 'company:<id>' for signed-in callers, 'address:<ip>' on public routes
    t.text('scope').notNullable();
    t.text('key').notNullable();
    t.uuid('company_id').references('companies.id').onDelete('CASCADE');
    // sha256 of method, path, query, caller and body: the same key with another request is refused (422)
    t.text('fingerprint').notNullable();
    t.text('state').notNullable();
    t.integer('response_status');
    t.jsonb('response_headers');
    // the exact bytes of the first answer, replayed as they were
    t.text('response_body');
    // while running: after this instant a crashed request's claim may be taken over
    t.timestamp('locked_until', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['scope', 'key']);
    t.index(['expires_at']);
    t.index(['company_id']);
  });
  await knex.raw(
    `alter table idempotency_keys add constraint idempotency_keys_state_check check (state in ('running','done'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('idempotency_keys');
  await knex.raw('drop table if exists rate_limit_counters');
}
