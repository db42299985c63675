import type { Knex } from 'knex';

/**
 * A comparison's row changes linked to their comparison without per-row foreign keys (issue 14, the time a
 * comparison takes to save its changes).
 *
 * The two foreign keys of `comparison_changes` (to its comparison and to its company) were checked row by
 * row: each inserted change looked its comparison and its company up and locked them, ~40% of what writing
 * a batch of changes cost (measured: 2048 changes in 30 against 18 ms). What they gave is kept otherwise:
 * - the comparison exists while its changes are written: the comparison's run writes each batch with one
 *   lock on the comparison's row (`for key share`, as a key's check takes, once per batch instead of once per
 *   row), and writes nothing when the row is gone (domain/comparisons/run.ts);
 * - the company: row-level security admits changes only for the acting company;
 * - deleting a comparison (directly, or with its file, version or company by their cascades) deletes its
 *   changes: a trigger on `comparisons` does it in the same transaction, as `on delete cascade` did
 *   (SECURITY DEFINER: as the cascade, whatever role deletes).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table comparison_changes drop constraint comparison_changes_comparison_id_foreign`);
  await knex.raw(`alter table comparison_changes drop constraint comparison_changes_company_id_foreign`);
  await knex.raw(`
    create or replace function comparison_changes_comparison_deleted() returns trigger
    language plpgsql security definer set search_path = public, pg_temp as $$
    begin
      delete from comparison_changes where comparison_id = old.id;
      return old;
    end $$`);
  await knex.raw(`revoke all on function comparison_changes_comparison_deleted() from public`);
  await knex.raw(`drop trigger if exists comparison_changes_comparison_deleted on comparisons`);
  await knex.raw(`create trigger comparison_changes_comparison_deleted after delete on comparisons
    for each row execute function comparison_changes_comparison_deleted()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop trigger if exists comparison_changes_comparison_deleted on comparisons`);
  await knex.raw(`drop function if exists comparison_changes_comparison_deleted()`);
  await knex.raw(
    `delete from comparison_changes x where not exists (select 1 from comparisons c where c.id = x.comparison_id)`,
  );
  await knex.raw(`alter table comparison_changes add constraint comparison_changes_comparison_id_foreign
    foreign key (comparison_id) references comparisons (id) on delete cascade`);
  await knex.raw(`alter table comparison_changes add constraint comparison_changes_company_id_foreign
    foreign key (company_id) references companies (id) on delete cascade`);
}
