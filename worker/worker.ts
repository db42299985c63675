import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import { Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import { createActivities } from '../activities';
import type { FanOut } from '../db/outbox';
import { outboxDispatcherWorkflow } from '../workflows/outboxDispatcher';
import { SYSTEM_COMPANY, workflowIdentity } from '../workflows/shared';
import { WEBHOOK_RETENTION_WORKFLOW } from '../workflows/definitions/webhooks';
import { AUDIT_RETENTION_WORKFLOW, NOTIFICATION_RETENTION_WORKFLOW } from '../workflows/definitions/collab';
import type { Resolver } from '../domain/webhooks/targets';
import type { AnalysisStep } from '../domain/reports/engine';
import type { BeforeSaveHook } from '../domain/comparisons/run';
import type { BillingChunkHook } from '../domain/billing/finalize';
import { BILLING_SCHEDULE_WORKFLOW, billingScheduleId } from '../workflows/definitions/billing';

export interface WorkerDeps {
  config: Config;
  knex: Knex;
  logger: Logger;
  connection: NativeConnection;
  /** A client on `connection` the caller uses too (the worker process); otherwise one is made on it. */
  client?: Client;
  fanOut?: FanOut;
  /** DNS resolver for the webhook address guard (tests only). */
  webhookResolver?: Resolver;
  /** extension steps of the report pass (tests; the rules and detectors of later issues) */
  reportSteps?: readonly AnalysisStep[];
  /** called by a comparison after comparing, before it saves (tests that stop a worker mid-comparison) */
  comparisonBeforeSave?: BeforeSaveHook;
  /** called after each company of a billing chunk is computed, before it commits (tests only) */
  billingChunkHook?: BillingChunkHook;
  /** Pre-built bundle (tests bundle once per run); otherwise the worker bundles workflows/ itself. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  const { config } = deps;
  if (
    deps.client &&
    (deps.client.connection !== deps.connection ||
      deps.client.options.namespace !== config.temporal.namespace)
  )
    throw new Error('createWorker: the client must be on the worker connection and namespace');
  return Worker.create({
    connection: deps.connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    ...(deps.workflowBundle
      ? { workflowBundle: deps.workflowBundle }
      : { workflowsPath: require.resolve('../workflows') }),
    activities: createActivities({
      config,
      knex: deps.knex,
      logger: deps.logger,
      fanOut: deps.fanOut,
      // activities start (fan-out) and signal (attempt history) workflows over the worker's connection
      temporal:
        deps.client ?? new Client({ connection: deps.connection, namespace: config.temporal.namespace }),
      temporalIsWorkerConnection: true,
      webhookResolver: deps.webhookResolver,
      reportSteps: deps.reportSteps,
      comparisonBeforeSave: deps.comparisonBeforeSave,
      billingChunkHook: deps.billingChunkHook,
    }),
    shutdownGraceTime: '10 seconds',
    // heartbeats (a build's or a comparison's progress, which the Web UI shows) reach Temporal at most a
    // second late: the SDK's default holds them back for 0.8 × the heartbeat timeout (8 s for a build)
    maxHeartbeatThrottleInterval: '1 second',
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

/**
 * A system Temporal Schedule `retention:<name>:<task queue>` that starts `workflowType` every `every`.
 * Created once per task queue; a worker that finds it already there leaves it as it is.
 */
async function ensureRetentionSchedule(
  client: Client,
  config: Config,
  params: { name: string; workflowType: string; every: '1 hour' },
): Promise<string> {
  const identity = workflowIdentity({
    kind: 'retention',
    parts: [params.name, config.temporal.taskQueue],
    companyId: SYSTEM_COMPANY,
    taskQueue: config.temporal.taskQueue,
  });
  const scheduleId = identity.workflowId;
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: params.every }] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      action: {
        type: 'startWorkflow',
        workflowType: params.workflowType,
        args: [],
        workflowId: identity.workflowId,
        taskQueue: identity.taskQueue,
        typedSearchAttributes: identity.typedSearchAttributes,
      },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  return scheduleId;
}

/** Every hour: removes webhook delivery records older than 30 days. */
export function ensureWebhookRetentionSchedule(client: Client, config: Config): Promise<string> {
  return ensureRetentionSchedule(client, config, {
    name: 'webhook-deliveries',
    workflowType: WEBHOOK_RETENTION_WORKFLOW,
    every: '1 hour',
  });
}

/** Every hour: removes notifications older than 90 days. */
export function ensureNotificationRetentionSchedule(client: Client, config: Config): Promise<string> {
  return ensureRetentionSchedule(client, config, {
    name: 'notifications',
    workflowType: NOTIFICATION_RETENTION_WORKFLOW,
    every: '1 hour',
  });
}

/** Every hour: removes audit entries older than AUDIT_RETENTION_DAYS (default 365). */
export function ensureAuditRetentionSchedule(client: Client, config: Config): Promise<string> {
  return ensureRetentionSchedule(client, config, {
    name: 'audit-log',
    workflowType: AUDIT_RETENTION_WORKFLOW,
    every: '1 hour',
  });
}

/** Every hour: removes objects of file versions that never committed (crashes between upload and commit). */
export function ensureFileOrphanSweepSchedule(client: Client, config: Config): Promise<string> {
  return ensureRetentionSchedule(client, config, {
    name: 'file-orphans',
    workflowType: 'fileOrphanSweepWorkflow',
    every: '1 hour',
  });
}

/**
 * The system Schedule `billing:schedule:<task queue>` (README "Billing"): fires at 00:05 UTC on the first day
 * of every month and starts `billingScheduleWorkflow`, which closes the month before. Catch-up window 7
 * days: a firing missed while the Temporal service was down runs when it returns (a worker that is down
 * only delays the started workflow, which waits in the task queue). Overlaps are skipped (one run at a
 * time). Created once per task queue; an existing one is left as it is.
 */
export async function ensureBillingSchedule(client: Client, config: Config): Promise<string> {
  const scheduleId = billingScheduleId(config.temporal.taskQueue);
  const identity = workflowIdentity({
    kind: 'billing',
    parts: ['schedule', config.temporal.taskQueue],
    companyId: SYSTEM_COMPANY,
    taskQueue: config.temporal.taskQueue,
  });
  try {
    await client.schedule.create({
      scheduleId,
      spec: { calendars: [{ dayOfMonth: 1, hour: 0, minute: 5 }] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '7 days' },
      action: {
        type: 'startWorkflow',
        workflowType: BILLING_SCHEDULE_WORKFLOW,
        args: [{}],
        workflowId: identity.workflowId,
        taskQueue: identity.taskQueue,
        typedSearchAttributes: identity.typedSearchAttributes,
      },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  return scheduleId;
}
