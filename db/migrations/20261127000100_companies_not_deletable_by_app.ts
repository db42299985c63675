import type { Knex } from 'knex';
import { appRoleName, systemRoleName } from '../rls';

/**
 * A company row cannot be deleted by the roles the API and the worker use (issue 15: "no route, role or key can
 * change or delete" audit entries). Deleting a company removes its audit entries through a SECURITY DEFINER
 * trigger (20261123001400_audit_log_company_trigger), so a role that may delete its company's row could erase
 * its audit log with one statement, though it may not delete from `audit_log`. No code path of the service
 * deletes companies (suspension is a status); an operator removes one with the owner's connection.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`revoke delete, truncate on companies from ${appRoleName()}, ${systemRoleName()}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`grant delete on companies to ${appRoleName()}, ${systemRoleName()}`);
}
