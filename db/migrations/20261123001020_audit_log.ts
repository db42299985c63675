import type { Knex } from 'knex';
import { appRoleName, systemRoleName } from '../rls';

/**
 * The audit log read through GET /audit-log (issue 15): who acted (person, API key with its prefix, or the
 * service), the outcome, the client's address; indexes for the list's filters (each a keyset on
 * (created_at, id) after the filter's columns); and append-only:
 * - the application role and the system tasks' role lose UPDATE and DELETE on the table (they keep SELECT and
 *   INSERT), so no route, key or system task can change or remove an entry;
 * - a trigger refuses UPDATE for every role, the owner included;
 * - retention removes old entries only through `purge_audit_log(before, batch)`, a SECURITY DEFINER function
 *   the system role may execute: it deletes only entries older than its argument, which the retention
 *   activity computes from AUDIT_RETENTION_DAYS (at least 30 days, so it cannot be used to erase fresh ones).
 */
export async function up(knex: Knex): Promise<void> {
  const app = appRoleName();
  const system = systemRoleName(app);
  await knex.schema.alterTable('audit_log', (t) => {
    t.text('actor_type').notNullable().defaultTo('person');
    t.text('actor_key_prefix');
    t.text('outcome').notNullable().defaultTo('success');
    t.text('client_address');
  });
  await knex.raw(`update audit_log set actor_type = case
      when actor_api_key_id is not null then 'apiKey'
      when actor_person_id is null then 'system'
      else 'person' end`);
  await knex.raw(
    `alter table audit_log add constraint audit_log_actor_type check (actor_type in ('person','apiKey','system'))`,
  );
  await knex.raw(
    `alter table audit_log add constraint audit_log_outcome check (outcome in ('success','failure','denied'))`,
  );
  await knex.raw(
    `create index audit_log_actor_idx on audit_log (company_id, actor_person_id, created_at, id)`,
  );
  await knex.raw(
    `create index audit_log_key_idx on audit_log (company_id, actor_api_key_id, created_at, id) where actor_api_key_id is not null`,
  );
  await knex.raw(`create index audit_log_action_idx on audit_log (company_id, action, created_at, id)`);
  await knex.raw(
    `create index audit_log_resource_type_idx on audit_log (company_id, resource_type, created_at, id)`,
  );
  await knex.raw(
    `create index audit_log_resource_id_idx on audit_log (company_id, resource_id, created_at, id)`,
  );
  // no index on created_at alone: the planner would scan it across companies for a filtered list; retention
  // walks each company's (company_id, created_at, id) index instead (purge_audit_log)

  await knex.raw(`revoke update, delete, truncate on audit_log from ${app}, ${system}`);
  await knex.raw(`
    create or replace function audit_log_refuse_update() returns trigger language plpgsql as $$
    begin
      raise exception 'audit entries are append-only' using errcode = 'insufficient_privilege';
    end $$`);
  await knex.raw(`drop trigger if exists audit_log_append_only on audit_log`);
  await knex.raw(`create trigger audit_log_append_only before update on audit_log
    for each row execute function audit_log_refuse_update()`);
  await knex.raw(`
    create or replace function purge_audit_log(before timestamptz, batch integer) returns integer
    language plpgsql security definer set search_path = public, pg_temp as $$
    declare removed integer;
    begin
      if before > now() - interval '30 days' then
        raise exception 'audit entries younger than 30 days are kept';
      end if;
      delete from audit_log where id in (
        select old.id from companies c
          cross join lateral (
            select a.id from audit_log a
             where a.company_id = c.id and a.created_at < before
             order by a.created_at limit batch) old
         limit batch);
      get diagnostics removed = row_count;
      return removed;
    end $$`);
  await knex.raw(`revoke all on function purge_audit_log(timestamptz, integer) from public`);
  await knex.raw(`grant execute on function purge_audit_log(timestamptz, integer) to ${system}`);
}

export async function down(knex: Knex): Promise<void> {
  const app = appRoleName();
  const system = systemRoleName(app);
  await knex.raw(`drop function if exists purge_audit_log(timestamptz, integer)`);
  await knex.raw(`drop trigger if exists audit_log_append_only on audit_log`);
  await knex.raw(`drop function if exists audit_log_refuse_update()`);
  await knex.raw(`grant update, delete on audit_log to ${app}, ${system}`);
  for (const index of [
    'audit_log_actor_idx',
    'audit_log_key_idx',
    'audit_log_action_idx',
    'audit_log_resource_type_idx',
    'audit_log_resource_id_idx',
  ])
    await knex.raw(`drop index if exists ${index}`);
  await knex.schema.alterTable('audit_log', (t) => {
    t.dropColumn('actor_type');
    t.dropColumn('actor_key_prefix');
    t.dropColumn('outcome');
    t.dropColumn('client_address');
  });
}
