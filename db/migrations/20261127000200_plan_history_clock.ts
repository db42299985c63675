import type { Knex } from 'knex';

/**
 * A plan change is recorded at the moment it is made, not when its transaction began. `now()` is the start of
 * the transaction: two plan changes of one company serialise on the company's row lock (choosePlan), so one
 * that began earlier but took the lock later would be recorded before the change it follows, and the bill —
 * computed from the history alone — would charge the plan the company left. `clock_timestamp()` in the
 * trigger (which runs after the row is locked) orders the history as the changes were applied.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(recordPlanChange('clock_timestamp()'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(recordPlanChange('now()'));
}

function recordPlanChange(at: string): string {
  return `
    create or replace function record_plan_change() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        if new.plan is not null then
          insert into plan_changes (company_id, plan, effective_at) values (new.id, new.plan, ${at});
        end if;
      elsif new.plan is distinct from old.plan then
        insert into plan_changes (company_id, plan, effective_at) values (new.id, new.plan, ${at});
      end if;
      return new;
    end $$`;
}
