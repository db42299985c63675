import type { Knex } from 'knex';
import { disableTenantIsolation, enableTenantIsolation } from '../rls';

/**
 * Two analytics figures of issue 18 that the first rollups did not give (README "GET /analytics"):
 *
 * - `bytesStored`, the bytes of the company's stored versions at the end of each period. `analytics_daily`
 *   gets a `bytes_stored_change` row per company and day: a version's bytes are added on the day it is
 *   uploaded and taken away on the day it is deleted (deleting a file removes its versions by cascade, which
 *   fires the row trigger on `file_versions`). The value at a day's end is the sum of the changes up to that
 *   day; the sum before a range's first day reads at most one row per day of the company's life, through a
 *   partial index holding only these rows.
 * - `filesWithSensitiveData`, distinct files flagged in a period: `analytics_sensitive_files` holds one row
 *   per (company, day, file) with a finding that day (insert … on conflict do nothing), so a week or a month
 *   counts distinct files over its days, which daily counts could not give. A file's first finding of a day
 *   also adds one to the day's `sensitive_files_daily` in `analytics_daily`: daily periods read that count
 *   with the other daily figures instead of counting distinct files again.
 *
 * Both are written by triggers in the transaction of their cause, as the other rollups. The triggers are
 * created before the backfill, in this migration's transaction: creating them locks the tables against
 * writes until the commit, so every existing row is counted once by the backfill and every later one by a
 * trigger. Deletions made before this migration are not known any more: the backfilled history counts the
 * versions still stored, from their upload day (today's value is exact).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index analytics_daily_bytes_stored on analytics_daily (company_id, day) include (value)
    where metric = 'bytes_stored_change'`);

  // a deleted version's bytes leave the figure, unless its company is being deleted with it (the company's
  // rollup rows go by cascade; a row written for it then would name a company that no longer exists)
  await knex.raw(`
    create or replace function analytics_bytes_stored() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        perform analytics_bump(new.company_id, new.created_at, 'bytes_stored_change', '', new.size_bytes);
      elsif tg_op = 'UPDATE' then
        if new.size_bytes is distinct from old.size_bytes then
          perform analytics_bump(new.company_id, now(), 'bytes_stored_change', '', new.size_bytes - old.size_bytes);
        end if;
      elsif exists (select 1 from companies where id = old.company_id) then
        perform analytics_bump(old.company_id, now(), 'bytes_stored_change', '', -old.size_bytes);
      end if;
      return null;
    end $$`);
  await knex.raw(`create trigger analytics_bytes_stored after insert or delete or update of size_bytes
    on file_versions for each row execute function analytics_bytes_stored()`);

  await knex.schema.createTable('analytics_sensitive_files', (t) => {
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.date('day').notNullable();
    // no foreign key: the figure records what was found, as the other rollups do, after the file is deleted
    t.uuid('file_id').notNullable();
    t.primary(['company_id', 'day', 'file_id']);
  });
  await enableTenantIsolation(knex, 'analytics_sensitive_files');

  // the same findings as `sensitive_versions` (a finding row with flagged columns), once per file and day
  await knex.raw(`
    create or replace function analytics_sensitive_files() returns trigger language plpgsql as $$
    begin
      if jsonb_array_length(new.columns) > 0 then
        insert into analytics_sensitive_files (company_id, day, file_id)
        values (new.company_id, (new.created_at at time zone 'UTC')::date, new.file_id)
        on conflict do nothing;
        -- the file's first finding of the day: the day's distinct count, read as it is for daily periods
        if found then
          perform analytics_bump(new.company_id, new.created_at, 'sensitive_files_daily', '', 1);
        end if;
      end if;
      return null;
    end $$`);
  await knex.raw(`create trigger analytics_sensitive_files after insert on sensitive_findings
    for each row execute function analytics_sensitive_files()`);

  // existing data (the migration's role owns the tables: row-level security does not hide rows from it)
  await knex.raw(`
    insert into analytics_daily as a (company_id, day, metric, dimension, value)
    select company_id, (created_at at time zone 'UTC')::date, 'bytes_stored_change', '', sum(size_bytes)
    from file_versions group by 1, 2
    on conflict (company_id, day, metric, dimension) do update set value = a.value + excluded.value`);
  await knex.raw(`
    insert into analytics_sensitive_files (company_id, day, file_id)
    select distinct company_id, (created_at at time zone 'UTC')::date, file_id
    from sensitive_findings where jsonb_array_length(columns) > 0
    on conflict do nothing`);
  await knex.raw(`
    insert into analytics_daily as a (company_id, day, metric, dimension, value)
    select company_id, day, 'sensitive_files_daily', '', count(*) from analytics_sensitive_files group by 1, 2
    on conflict (company_id, day, metric, dimension) do update set value = excluded.value`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop trigger if exists analytics_sensitive_files on sensitive_findings`);
  await knex.raw(`drop function if exists analytics_sensitive_files()`);
  await disableTenantIsolation(knex, 'analytics_sensitive_files');
  await knex.schema.dropTableIfExists('analytics_sensitive_files');
  await knex.raw(`drop trigger if exists analytics_bytes_stored on file_versions`);
  await knex.raw(`drop function if exists analytics_bytes_stored()`);
  await knex.raw(
    `delete from analytics_daily where metric in ('bytes_stored_change', 'sensitive_files_daily')`,
  );
  await knex.raw(`drop index if exists analytics_daily_bytes_stored`);
}
