import type { Knex } from 'knex';

/**
 * Reports (README "Reports"): one row per file version, rebuilt in place. `build` counts the builds of the
 * version (1 for the build started by the upload, 2… for rebuilds); the status change that ends a build
 * is conditional on its build number, which makes report.ready / report.failed exactly once per build.
 * The result (profile and the sections of later steps) is JSONB up to REPORT_INLINE_MAX_BYTES, otherwise
 * an object in MinIO named by `result_object_key`. Rows of 20261122000400 ('requested') become 'queued'.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('reports', (t) => {
    t.integer('build').notNullable().defaultTo(1);
    t.text('failure_reason');
    t.text('failure_message');
    t.bigInteger('rows_read');
    t.bigInteger('bytes_read');
    t.bigInteger('bytes_total');
    t.text('phase');
    t.jsonb('result');
    t.text('result_object_key');
    t.integer('result_bytes');
    t.text('correlation_id');
    t.timestamp('queued_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
  });
  await knex('reports').where({ status: 'requested' }).update({ status: 'queued' });
  await knex.raw(`alter table reports alter column status set default 'queued'`);
  await knex.raw(
    `alter table reports add constraint reports_status_check check (status in ('queued','building','ready','failed'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table reports drop constraint if exists reports_status_check`);
  await knex.raw(`alter table reports alter column status set default 'requested'`);
  await knex('reports').update({ status: 'requested' });
  await knex.schema.alterTable('reports', (t) => {
    for (const c of [
      'build',
      'failure_reason',
      'failure_message',
      'rows_read',
      'bytes_read',
      'bytes_total',
      'phase',
      'result',
      'result_object_key',
      'result_bytes',
      'correlation_id',
      'queued_at',
      'started_at',
      'finished_at',
    ])
      t.dropColumn(c);
  });
}
