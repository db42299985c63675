import type { Knex } from 'knex';
import { disableTenantIsolation, enableTenantIsolation } from '../rls';

/**
 * Billing (README "Billing").
 *
 * - `plan_changes`: the plan history. A trigger on `companies` records every plan choice and change
 *   (insert with a plan, update of `plan`) with the transaction's time, in the transaction of the change,
 *   whoever makes it (PATCH /subscriptions/me, registration, the demo, operators' scripts, fixtures). Existing
 *   companies get their current plan from their creation time. A period's bill is computed from these rows
 *   and `file_usage` alone.
 * - `invoices`: one per company and period (unique), numbered per company without gaps (unique
 *   company + sequence); lines as JSONB; the PDF's object key once rendered.
 * Both are tenant tables (row-level security).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('plan_changes', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.text('plan');
    t.timestamp('effective_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['company_id', 'effective_at', 'id']);
  });
  await knex.raw(
    `alter table plan_changes add constraint plan_changes_plan_check check (plan is null or plan in ('free','basic','premium'))`,
  );
  await knex.raw(`
    insert into plan_changes (company_id, plan, effective_at)
    select id, plan, created_at from companies where plan is not null`);
  await knex.raw(`
    create or replace function record_plan_change() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        if new.plan is not null then
          insert into plan_changes (company_id, plan, effective_at) values (new.id, new.plan, now());
        end if;
      elsif new.plan is distinct from old.plan then
        insert into plan_changes (company_id, plan, effective_at) values (new.id, new.plan, now());
      end if;
      return new;
    end $$`);
  await knex.raw(`
    create trigger companies_plan_history after insert or update of plan on companies
    for each row execute function record_plan_change()`);
  await enableTenantIsolation(knex, 'plan_changes');

  await knex.schema.createTable('invoices', (t) => {
    t.uuid('id').primary();
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.integer('sequence').notNullable();
    t.text('number').notNullable();
    t.text('period_key').notNullable();
    t.timestamp('period_start', { useTz: true }).notNullable();
    t.timestamp('period_end', { useTz: true }).notNullable();
    t.text('status').notNullable().defaultTo('finalized');
    t.text('currency').notNullable();
    t.bigInteger('subtotal_cents').notNullable();
    t.bigInteger('total_cents').notNullable();
    t.jsonb('lines').notNullable();
    t.jsonb('segments').notNullable();
    t.integer('files_used').notNullable();
    t.text('company_name').notNullable();
    t.text('document_key');
    t.text('workflow_id');
    t.timestamp('issued_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['company_id', 'period_start'], { indexName: 'invoices_company_period' });
    t.unique(['company_id', 'sequence'], { indexName: 'invoices_company_sequence' });
  });
  await knex.raw(
    `alter table invoices add constraint invoices_status_check check (status in ('finalized','void'))`,
  );
  await knex.raw(`alter table invoices add constraint invoices_total_check check (total_cents >= 0)`);
  await enableTenantIsolation(knex, 'invoices');
}

export async function down(knex: Knex): Promise<void> {
  await disableTenantIsolation(knex, 'invoices');
  await knex.schema.dropTable('invoices');
  await knex.raw(`drop trigger if exists companies_plan_history on companies`);
  await knex.raw(`drop function if exists record_plan_change()`);
  await disableTenantIsolation(knex, 'plan_changes');
  await knex.schema.dropTable('plan_changes');
}
