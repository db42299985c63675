import type { Knex } from 'knex';

/**
 * Deliveries are attempted first in batches (one workflow per company and dispatch), and a delivery that
 * needs retries moves to a workflow of its own. `owner_workflow_id` names the one workflow allowed to
 * attempt a delivery, so a batch started twice (a crash between start and mark) never posts twice.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.text('owner_workflow_id');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumn('owner_workflow_id');
  });
}
