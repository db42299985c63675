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

export async function up(knex: Knex): Promise<void> {
  await ensureAppRole(knex);
  await createActingFunctions(knex);
  await enableTenantIsolation(knex, 'companies', { column: 'id' });
  for (const table of TENANT_TABLES) await enableTenantIsolation(knex, table);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [...TENANT_TABLES, 'companies']) await disableTenantIsolation(knex, table);
  await knex.raw('drop function if exists app_company_id()');
  await knex.raw('drop function if exists app_system_task()');
}
