import type { Knex } from 'knex';
import { createActingFunctions, disableTenantIsolation, enableTenantIsolation, ensureAppRole } from '../rls';

/**
 * Tenant isolation enforced by PostgreSQL (db/rls.ts): the application role, the acting-company functions
 * and a policy on every tenant table. companies is isolated on its own id. refresh_tokens has no company
 * (it hangs off sessions, and is read only by the named sign-in tasks), oauth_states exist before any
 * company, rate_limit_counters are keyed by caller.
 */
export const TENANT_TABLES = [
  'people',
  'outbox',
  'audit_log',
  'file_usage',
  'sessions',
  'api_keys',
  'one_time_tokens',
  'demo_seed_steps',
  'idempotency_keys',
  'files',
  'datasets',
  'file_versions',
  'reports',
  'quota_notices',
  'webhook_endpoints',
  'webhook_deliveries',
];

/**
 * The tables above plus any other table with a company_id that exists when this runs (a tenant table of a
 * migration merged with an earlier timestamp is covered too; later ones call enableTenantIsolation).
 */
async function tenantTables(knex: Knex): Promise<string[]> {
  const found = (await knex.raw(
    `select table_name from information_schema.columns
     where table_schema = current_schema() and column_name = 'company_id' order by table_name`,
  )) as { rows: Array<{ table_name: string }> };
  return [...new Set([...TENANT_TABLES, ...found.rows.map((r) => r.table_name)])];
}

export async function up(knex: Knex): Promise<void> {
  await ensureAppRole(knex);
  await createActingFunctions(knex);
  await enableTenantIsolation(knex, 'companies', { column: 'id' });
  for (const table of await tenantTables(knex)) await enableTenantIsolation(knex, table);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [...(await tenantTables(knex)), 'companies']) await disableTenantIsolation(knex, table);
  await knex.raw('drop function if exists app_company_id()');
  await knex.raw('drop function if exists app_system_task()');
}
