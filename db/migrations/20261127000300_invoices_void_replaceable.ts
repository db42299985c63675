import type { Knex } from 'knex';

/**
 * A voided invoice can be replaced: at most one invoice per company and period that is not `void` (a partial
 * unique index), where the unique (company, period start) constraint counted void invoices too, so a period
 * whose invoice was voided could never be invoiced again. Finalisation (domain/billing/finalize.ts) skips only
 * companies with a non-void invoice for the period; the replacement takes the company's next number and the
 * void one keeps its own (unique company + sequence is unchanged).
 *
 * Down restores the constraint; it fails while a period has a void invoice and its replacement.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table invoices drop constraint invoices_company_period`);
  await knex.raw(
    `create unique index invoices_company_period_not_void on invoices (company_id, period_start)
     where status <> 'void'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop index invoices_company_period_not_void`);
  await knex.raw(
    `alter table invoices add constraint invoices_company_period unique (company_id, period_start)`,
  );
}
