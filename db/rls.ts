/**
 * Row-level security: the database keeps each company's rows to itself.
 *
 * - The API and the worker connect as the owner of the tables but act as the application role
 *   (`DATABASE_APP_ROLE`, default `dataservice_app`: NOLOGIN, no BYPASSRLS, not the owner) through
 *   `SET ROLE` right after each connection opens (db/knex.ts). Migrations keep the owner.
 * - Each unit of work (db/unitOfWork.ts) sets `app.company_id` (from the principal) or `app.system_task`
 *   (a named cross-company task) with `set_config(..., true)`, which ends with the transaction (nothing
 *   when the connection's session-level settings already name that actor, db/knex.ts).
 * - Every tenant table has two policies: `tenant_isolation`, for the application role (rows of the acting
 *   company only, reads and writes: USING and WITH CHECK), and `system_task`, for the system role
 *   (`<app role>_system`) that a named system unit of work switches to with SET LOCAL ROLE (any row, only
 *   while `app.system_task` names the task).
 *   Without either setting a query sees no row and may write none.
 *
 * A migration that creates a tenant table calls `enableTenantIsolation(knex, 'table')` in the same `up`.
 */
import type { Knex } from 'knex';
import { DEFAULT_APP_ROLE } from '../common/config';

/** The application role named by DATABASE_APP_ROLE (read here too, as migrations receive only a knex). */
export function appRoleName(env: NodeJS.ProcessEnv = process.env): string {
  const role = env.DATABASE_APP_ROLE?.trim() || DEFAULT_APP_ROLE;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(role))
    throw new Error(`DATABASE_APP_ROLE: invalid role name "${role}"`);
  return role;
}

/**
 * The role a named system task switches to for its transaction (`<app role>_system`): the only role the
 * cross-company policy applies to, so the application role's own policy stays one indexable comparison
 * (`company_id = app_company_id()`, no OR), and the application role alone never sees another company.
 */
export function systemRoleName(appRole = appRoleName()): string {
  return `${appRole}_system`;
}

async function ensureRole(knex: Knex, role: string): Promise<void> {
  await knex.raw(`
    do $$
    begin
      if not exists (select 1 from pg_roles where rolname = '${role}') then
        begin
          create role ${role} nologin nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
        exception when duplicate_object or unique_violation then null; -- created by a concurrent run
        end;
      end if;
      if not (select rolsuper from pg_roles where rolname = current_user)
         and not pg_has_role(current_user, '${role}', 'MEMBER') then
        execute format('grant %I to %I', '${role}', current_user);
      end if;
    end $$`);
  await knex.raw(`grant usage on schema public to ${role}`);
  await knex.raw(`grant select, insert, update, delete on all tables in schema public to ${role}`);
  await knex.raw(`grant usage, select on all sequences in schema public to ${role}`);
  await knex.raw(
    `alter default privileges in schema public grant select, insert, update, delete on tables to ${role}`,
  );
  await knex.raw(`alter default privileges in schema public grant usage, select on sequences to ${role}`);
}

/**
 * Creates the application role if the cluster lacks it (roles are cluster-wide: every database of the
 * cluster, test runs included, shares it), lets the migrating user act as it, and gives it the data
 * privileges (no DDL) on this schema's tables, present and future.
 */
export async function ensureAppRole(knex: Knex, role = appRoleName()): Promise<void> {
  await ensureRole(knex, role);
  await ensureRole(knex, systemRoleName(role));
}

/** The SQL functions the policies compare with (created once, by 20261123000100_row_level_security). */
export async function createActingFunctions(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function app_company_id() returns uuid language sql stable as $$
      select nullif(current_setting('app.company_id', true), '')::uuid
    $$`);
  await knex.raw(`
    create or replace function app_system_task() returns text language sql stable as $$
      select nullif(current_setting('app.system_task', true), '')
    $$`);
}

/**
 * Row-level security for one tenant table: rows whose `column` (company_id; `id` for companies) is the
 * acting company, or any row inside a named system task. One line per new tenant table in its migration.
 */
export async function enableTenantIsolation(
  knex: Knex,
  table: string,
  options: { column?: string } = {},
): Promise<void> {
  const column = options.column ?? 'company_id';
  await knex.raw(`alter table ?? enable row level security`, [table]);
  await knex.raw(`drop policy if exists tenant_isolation on ??`, [table]);
  await knex.raw(`drop policy if exists system_task on ??`, [table]);
  const app = appRoleName();
  const system = systemRoleName(app);
  await knex.raw(
    `create policy tenant_isolation on ?? to ${app} using (?? = app_company_id()) with check (?? = app_company_id())`,
    [table, column, column],
  );
  await knex.raw(
    `create policy system_task on ?? to ${system}
       using (app_system_task() is not null) with check (app_system_task() is not null)`,
    [table],
  );
  await knex.raw(`grant select, insert, update, delete on ?? to ${app}, ${system}`, [table]);
}

/** Undoes `enableTenantIsolation` (for a migration's `down`). */
export async function disableTenantIsolation(knex: Knex, table: string): Promise<void> {
  await knex.raw(`drop policy if exists tenant_isolation on ??`, [table]);
  await knex.raw(`drop policy if exists system_task on ??`, [table]);
  await knex.raw(`alter table ?? disable row level security`, [table]);
}
