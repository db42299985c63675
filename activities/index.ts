import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import { createStorage, type Storage } from '../common/storage';
import { createFileActivities } from './files';
import type { Resolver } from '../domain/webhooks/targets';
import type { FanOut } from '../db/outbox';
import { createOutboxActivities } from './outbox';
import { createReportActivities } from './reports';
import { createComparisonActivities } from './comparisons';
import type { AnalysisStep } from '../domain/reports/engine';
import type { BeforeSaveHook } from '../domain/comparisons/run';
import { qualityExtension } from '../domain/rules/extension';
import { sensitiveExtension } from '../domain/sensitive/extension';
import { analyticsExtension } from '../domain/analytics/extension';
import { createWebhookActivities, createWebhookFanOut } from './webhooks';
import { actingAs, type SystemTask } from '../db/unitOfWork';
import { createBillingActivities } from './billing';
import type { BillingChunkHook } from '../domain/billing/finalize';
import { createCollabActivities } from './collab';

/** The same activities, each run as the named system task (its queries may cross companies). */
function asSystemTask<A extends Record<string, (...args: never[]) => Promise<unknown>>>(
  task: SystemTask,
  activities: A,
): A {
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [
      name,
      (...args: never[]) => actingAs({ system: task }, () => fn(...args)),
    ]),
  ) as A;
}

export interface ActivityDeps {
  config: Config;
  knex: Knex;
  logger: Logger;
  /** Replaces the default fan-out (webhook deliveries) of the outbox dispatcher. */
  fanOut?: FanOut;
  /** MinIO; built from the configuration when not given */
  storage?: Storage;
  /** Starts and signals workflows from activities (webhook fan-out, attempt history). */
  temporal?: Client;
  /** `temporal` shares the worker's NativeConnection (eager workflow start is possible) */
  temporalIsWorkerConnection?: boolean;
  /** DNS resolver for the webhook address guard (tests only). */
  webhookResolver?: Resolver;
  /** extension steps of the report pass, after the profile (domain/reports/engine/types.ts) */
  reportSteps?: readonly AnalysisStep[];
  /** called by a comparison after comparing, before it saves (tests only) */
  comparisonBeforeSave?: BeforeSaveHook;
  /** called after each company of a billing chunk is computed, before it commits (tests only) */
  billingChunkHook?: BillingChunkHook;
}

/** Every activity the worker registers, built from its clients so tests can pass their own. */
export function createActivities(deps: ActivityDeps) {
  // Outbox events become webhook deliveries unless a test brings its own fan-out.
  const webhooks =
    !deps.fanOut && deps.temporal
      ? createWebhookFanOut({
          config: deps.config,
          knex: deps.knex,
          logger: deps.logger,
          temporal: deps.temporal,
          eagerStart: deps.temporalIsWorkerConnection,
        })
      : undefined;
  const storage = deps.storage ?? createStorage(deps.config);
  const webhookActivities = createWebhookActivities({
    config: deps.config,
    knex: deps.knex,
    logger: deps.logger,
    temporal: deps.temporal,
    resolver: deps.webhookResolver,
  });
  const { deleteExpiredWebhookDeliveries: _retention, ...deliveryActivities } = webhookActivities; // eslint-disable-line @typescript-eslint/unbound-method
  // Every activity acts under row-level security (db/unitOfWork.ts): the cross-company ones as their named
  // system task, the report and comparison ones for the company of their request.
  return {
    ...asSystemTask(
      'outbox-dispatch',
      createOutboxActivities({
        knex: deps.knex,
        logger: deps.logger,
        batchSize: deps.config.outbox.batchSize,
        idleWaitMs: deps.config.outbox.idleWaitMs,
        fanOut: deps.fanOut ?? webhooks?.fanOut,
        sweep: webhooks ? () => webhooks.startLeftBehind() : undefined,
      }),
    ),
    ...asSystemTask('webhook-delivery', deliveryActivities),
    ...asSystemTask('webhook-retention', {
      deleteExpiredWebhookDeliveries: () => webhookActivities.deleteExpiredWebhookDeliveries(),
    }),
    // issue 15: the retention Schedules of notifications and audit entries, each its own system task
    ...(() => {
      const collab = createCollabActivities({
        knex: deps.knex,
        logger: deps.logger,
        auditRetentionDays: deps.config.auditRetentionDays,
      });
      return {
        ...asSystemTask('notification-retention', {
          deleteExpiredNotifications: () => collab.deleteExpiredNotifications(),
        }),
        ...asSystemTask('audit-retention', {
          deleteExpiredAuditEntries: () => collab.deleteExpiredAuditEntries(),
        }),
      };
    })(),
    ...createReportActivities({
      knex: deps.knex,
      storage,
      config: deps.config,
      steps: deps.reportSteps,
      // quality rules and sensitive data (issue 13): prepared at the start of every build
      extensions: [qualityExtension(), sensitiveExtension(), analyticsExtension()],
    }),
    ...createComparisonActivities({
      knex: deps.knex,
      storage,
      config: deps.config,
      beforeSave: deps.comparisonBeforeSave,
    }),
    ...asSystemTask(
      'file-sweep',
      createFileActivities({
        knex: deps.knex,
        storage,
        temporal: deps.temporal,
        taskQueue: deps.config.temporal.taskQueue,
      }),
    ),
    // billing (issue 16): the chunks open their own units of work as the system task `billing`
    ...asSystemTask(
      'billing',
      createBillingActivities({ knex: deps.knex, storage, logger: deps.logger, hook: deps.billingChunkHook }),
    ),
  };
}

export type Activities = ReturnType<typeof createActivities>;
