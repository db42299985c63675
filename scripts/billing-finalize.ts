/**
 * Operators: finalise a closed billing period by hand (README "Billing"). Idempotent: companies already
 * invoiced for the period are left alone; prints what it did as JSON.
 *   npm run billing:finalize -- --period 2026-10            # through Temporal: the period's workflow billing:<period>:<task queue>
 *   npm run billing:finalize -- --period 2026-10 --direct   # in this process (no worker needed)
 * Through Temporal, a run of the period already in progress is joined (its result printed), not doubled.
 */
import { parseArgs } from 'node:util';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { loadConfig } from '../common/config';
import { createLogger } from '../common/logger';
import { createStorage } from '../common/storage';
import { createTemporalClient } from '../common/temporal';
import { createKnex, migrateLatest } from '../db/knex';
import { closedPeriod, finalizePeriodHere } from '../domain/billing/finalize';
import {
  BILLING_PERIOD_WORKFLOW,
  type BillingPeriodInput,
  type BillingPeriodResult,
} from '../workflows/definitions/billing';
import { workflowIdentity, SYSTEM_COMPANY } from '../workflows/shared';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { period: { type: 'string' }, direct: { type: 'boolean', default: false } },
  });
  if (!values.period) {
    console.error('--period YYYY-MM is required');
    process.exit(2);
  }
  const periodKey = values.period;
  closedPeriod(periodKey);
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'billing-finalize');
  if (values.direct) {
    const knex = createKnex(config.databaseUrl, 6);
    try {
      await migrateLatest(knex);
      const result = await finalizePeriodHere(
        { knex, storage: createStorage(config), logger },
        { periodKey, workflowId: `operator:${new Date().toISOString()}` },
      );
      console.log(JSON.stringify({ periodKey, mode: 'direct', ...result }));
    } finally {
      await knex.destroy();
    }
    return;
  }
  const client = createTemporalClient(config);
  try {
    const identity = workflowIdentity({
      kind: 'billing',
      parts: [periodKey, config.temporal.taskQueue],
      companyId: SYSTEM_COMPANY,
      taskQueue: config.temporal.taskQueue,
    });
    const input: BillingPeriodInput = { periodKey, trigger: 'operator' };
    const handle = await client.workflow.start(BILLING_PERIOD_WORKFLOW, {
      ...identity,
      args: [input],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    });
    console.error(`waiting for ${handle.workflowId} (run ${handle.firstExecutionRunId})…`);
    const result = (await handle.result()) as BillingPeriodResult;
    console.log(JSON.stringify({ mode: 'temporal', workflowId: handle.workflowId, ...result }));
  } finally {
    await client.connection.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
