import type { Knex } from 'knex';
import { disableTenantIsolation, enableTenantIsolation } from '../rls';

/**
 * Analytics rollups (issue 18, README "Analytics"): daily counters per company, maintained in the same
 * transaction as the change that causes them, so `GET /analytics` reads at most (days × metrics) small rows
 * instead of scanning files, versions, reports, comparisons and deliveries.
 *
 * - `analytics_daily`: (company, UTC day, metric, dimension) → value. The dimension is '' or the id the
 *   metric is broken down by (a rule for `rule_failed`, an endpoint for the delivery counters).
 *   Written by the triggers below (uploads, report and comparison outcomes, sensitive findings, webhook
 *   delivery outcomes) and by the report build's analytics step (quality score, failed rules:
 *   domain/analytics/extension.ts), always in the transaction of the cause.
 * - `analytics_requests`: (company, UTC day, person, API key or the nil UUID for a session) → requests,
 *   written by authentication for every authenticated request (domain/analytics/requests.ts): API
 *   requests per key, and the active people of a period (distinct people with a request).
 *
 * Both are tenant tables (row-level security). The triggers run as whoever makes the change, so a row they
 * write belongs to the changed row's company and passes the same policies.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('analytics_daily', (t) => {
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.date('day').notNullable();
    t.text('metric').notNullable();
    t.text('dimension').notNullable().defaultTo('');
    t.decimal('value', 20, 4).notNullable().defaultTo(0);
    t.primary(['company_id', 'day', 'metric', 'dimension']);
  });
  await knex.schema.createTable('analytics_requests', (t) => {
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.date('day').notNullable();
    t.uuid('person_id').notNullable();
    // the nil UUID for requests made with a session
    t.uuid('api_key_id').notNullable();
    t.bigInteger('requests').notNullable().defaultTo(0);
    t.primary(['company_id', 'day', 'person_id', 'api_key_id']);
  });
  await enableTenantIsolation(knex, 'analytics_daily');
  await enableTenantIsolation(knex, 'analytics_requests');

  await knex.raw(`
    create or replace function analytics_bump(p_company uuid, p_at timestamptz, p_metric text, p_dimension text, p_amount numeric)
    returns void language sql as $$
      insert into analytics_daily as a (company_id, day, metric, dimension, value)
      values (p_company, (p_at at time zone 'UTC')::date, p_metric, coalesce(p_dimension, ''), p_amount)
      on conflict (company_id, day, metric, dimension) do update set value = a.value + excluded.value
    $$`);

  // uploads: a new file (version 1) or a new version, and the bytes stored by it
  await knex.raw(`
    create or replace function analytics_file_versions() returns trigger language plpgsql as $$
    begin
      perform analytics_bump(new.company_id, new.created_at,
        case when new.version = 1 then 'files_uploaded' else 'versions_uploaded' end, '', 1);
      perform analytics_bump(new.company_id, new.created_at, 'bytes_uploaded', '', new.size_bytes);
      return null;
    end $$`);
  await knex.raw(`create trigger analytics_file_versions after insert on file_versions
    for each row execute function analytics_file_versions()`);

  // report builds that ended: ready or failed, once per build (a rebuild goes back to queued first)
  await knex.raw(`
    create or replace function analytics_reports() returns trigger language plpgsql as $$
    begin
      if new.status in ('ready', 'failed')
         and (tg_op = 'INSERT' or old.status is distinct from new.status or old.build is distinct from new.build) then
        perform analytics_bump(new.company_id, coalesce(new.finished_at, now()),
          case when new.status = 'ready' then 'reports_ready' else 'reports_failed' end, '', 1);
      end if;
      return null;
    end $$`);
  await knex.raw(`create trigger analytics_reports after insert or update of status, build on reports
    for each row execute function analytics_reports()`);

  // comparisons that finished, and those that found row changes
  await knex.raw(`
    create or replace function analytics_comparisons() returns trigger language plpgsql as $$
    begin
      if new.status = 'ready' and (tg_op = 'INSERT' or old.status is distinct from new.status) then
        perform analytics_bump(new.company_id, coalesce(new.finished_at, now()), 'comparisons_ready', '', 1);
        if coalesce(new.change_count, 0) > 0 then
          perform analytics_bump(new.company_id, coalesce(new.finished_at, now()), 'comparisons_changed', '', 1);
        end if;
      end if;
      return null;
    end $$`);
  await knex.raw(`create trigger analytics_comparisons after insert or update of status on comparisons
    for each row execute function analytics_comparisons()`);

  // versions whose report found personal or secret data (a finding row exists only when columns were flagged)
  await knex.raw(`
    create or replace function analytics_sensitive_findings() returns trigger language plpgsql as $$
    begin
      if jsonb_array_length(new.columns) > 0 then
        perform analytics_bump(new.company_id, new.created_at, 'sensitive_versions', '', 1);
      end if;
      return null;
    end $$`);
  await knex.raw(`create trigger analytics_sensitive_findings after insert on sensitive_findings
    for each row execute function analytics_sensitive_findings()`);

  // webhook deliveries that ended, per endpoint
  await knex.raw(`
    create or replace function analytics_webhook_deliveries() returns trigger language plpgsql as $$
    begin
      if new.status in ('succeeded', 'failed') and (tg_op = 'INSERT' or old.status is distinct from new.status) then
        perform analytics_bump(new.company_id, now(),
          case when new.status = 'succeeded' then 'deliveries_succeeded' else 'deliveries_failed' end,
          new.endpoint_id::text, 1);
      end if;
      return null;
    end $$`);
  await knex.raw(`create trigger analytics_webhook_deliveries after insert or update of status on webhook_deliveries
    for each row execute function analytics_webhook_deliveries()`);
}

export async function down(knex: Knex): Promise<void> {
  for (const [trigger, table] of [
    ['analytics_file_versions', 'file_versions'],
    ['analytics_reports', 'reports'],
    ['analytics_comparisons', 'comparisons'],
    ['analytics_sensitive_findings', 'sensitive_findings'],
    ['analytics_webhook_deliveries', 'webhook_deliveries'],
  ]) {
    await knex.raw(`drop trigger if exists ${trigger} on ${table}`);
    await knex.raw(`drop function if exists ${trigger}()`);
  }
  await knex.raw(`drop function if exists analytics_bump(uuid, timestamptz, text, text, numeric)`);
  await disableTenantIsolation(knex, 'analytics_requests');
  await disableTenantIsolation(knex, 'analytics_daily');
  await knex.schema.dropTableIfExists('analytics_requests');
  await knex.schema.dropTableIfExists('analytics_daily');
}
