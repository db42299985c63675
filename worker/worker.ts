import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import { createActivities } from '../activities';
import type { FanOut } from '../activities/outbox';
import { outboxDispatcherWorkflow } from '../workflows/outboxDispatcher';
import { SYSTEM_COMPANY, workflowIdentity } from '../workflows/shared';

export interface WorkerDeps {
  config: Config;
  knex: Knex;
  logger: Logger;
  connection: NativeConnection;
  fanOut?: FanOut;
  /** Pre-built bundle (tests bundle once per run); otherwise the worker bundles workflows/ itself. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  const { config } = deps;
  return Worker.create({
    connection: deps.connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    ...(deps.workflowBundle
      ? { workflowBundle: deps.workflowBundle }
      : { workflowsPath: require.resolve('../workflows') }),
    activities: createActivities({ config, knex: deps.knex, logger: deps.logger, fanOut: deps.fanOut }),
    shutdownGraceTime: '10 seconds',
  });
}

/** Starts the dispatcher for this task queue unless it runs already (safe from every worker copy). */
export async function ensureOutboxDispatcher(client: Client, config: Config): Promise<string> {
  const identity = workflowIdentity({
    kind: 'outbox-dispatcher',
    parts: [config.temporal.taskQueue],
    companyId: SYSTEM_COMPANY,
    taskQueue: config.temporal.taskQueue,
  });
  const handle = await client.workflow.start(outboxDispatcherWorkflow, {
    ...identity,
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
  });
  return handle.workflowId;
}
