import type { Knex } from 'knex';

/**
 * Rules no longer name deleted files: a file's deletion removes it from the rules restricted to it
 * (domain/rules/queries.ts forgetFileInRules). This removes the ids of files deleted before that from the
 * rules that still name them, keeping the order of the others; a rule left naming none applies to no file
 * (`[]`), as after a deletion now. Nothing to undo: down changes nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    update rules r
       set file_ids = coalesce(
             (select array_agg(f.id order by f.n)
                from unnest(r.file_ids) with ordinality as f(id, n)
               where exists (select 1 from files where files.id = f.id and files.company_id = r.company_id)),
             '{}'::uuid[]),
           updated_at = now()
     where r.file_ids is not null
       and exists (select 1 from unnest(r.file_ids) as f(id)
                    where not exists (select 1 from files
                                       where files.id = f.id and files.company_id = r.company_id))`);
}

export async function down(): Promise<void> {}
