import type { Knex } from 'knex';

/**
 * The audit log's link to its company without a foreign key (issue 15, the cost of an entry on a write route).
 *
 * A foreign key is checked on every insert by `select 1 from companies where id = $1 for key share`: every
 * entry of a company locks that company's one row, so concurrent writes of one company share the lock through a
 * multixact, each entry paying for it — about a quarter of what an entry costs PostgreSQL (measured: 0.072 against
 * 0.054 ms of backend CPU per entry, 16 writers of one company). What the key gave is kept otherwise:
 * - an entry names an existing company: the API's role writes entries only for the company its request acts for
 *   (the row-level-security policy's `with check`), and the system tasks write them for companies they read;
 * - deleting a company removes its entries, as `on delete cascade` did: a trigger on `companies` deletes them in
 *   the same statement's transaction (SECURITY DEFINER: neither the API's role nor the system role may delete
 *   entries themselves; the audit log stays append-only for both).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table audit_log drop constraint audit_log_company_id_foreign`);
  await knex.raw(`
    create or replace function audit_log_company_deleted() returns trigger
    language plpgsql security definer set search_path = public, pg_temp as $$
    begin
      delete from audit_log where company_id = old.id;
      return old;
    end $$`);
  await knex.raw(`revoke all on function audit_log_company_deleted() from public`);
  await knex.raw(`drop trigger if exists audit_log_company_deleted on companies`);
  await knex.raw(`create trigger audit_log_company_deleted after delete on companies
    for each row execute function audit_log_company_deleted()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop trigger if exists audit_log_company_deleted on companies`);
  await knex.raw(`drop function if exists audit_log_company_deleted()`);
  await knex.raw(
    `delete from audit_log a where not exists (select 1 from companies c where c.id = a.company_id)`,
  );
  await knex.raw(`alter table audit_log add constraint audit_log_company_id_foreign
    foreign key (company_id) references companies (id) on delete cascade`);
}
