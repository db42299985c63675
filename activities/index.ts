import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import { createStorage, type Storage } from '../common/storage';
import { createFileActivities } from './files';
import type { Resolver } from '../common/webhookTargets';
import { createOutboxActivities, type FanOut } from './outbox';
import { createReportActivities } from './reports';
import { createComparisonActivities } from './comparisons';
import type { AnalysisStep } from '../domain/reports/engine';
import { createWebhookActivities, createWebhookFanOut } from './webhooks';

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
  comparisonBeforeSave?: () => Promise<void>;
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
  return {
    ...createOutboxActivities({
      knex: deps.knex,
      logger: deps.logger,
      batchSize: deps.config.outbox.batchSize,
      idleWaitMs: deps.config.outbox.idleWaitMs,
      fanOut: deps.fanOut ?? webhooks?.fanOut,
      sweep: webhooks ? () => webhooks.startLeftBehind() : undefined,
    }),
    ...createWebhookActivities({
      config: deps.config,
      knex: deps.knex,
      logger: deps.logger,
      temporal: deps.temporal,
      resolver: deps.webhookResolver,
    }),
    ...createReportActivities({ knex: deps.knex, storage, config: deps.config, steps: deps.reportSteps }),
    ...createComparisonActivities({
      knex: deps.knex,
      storage,
      config: deps.config,
      beforeSave: deps.comparisonBeforeSave,
    }),
    ...createFileActivities({
      knex: deps.knex,
      storage,
      temporal: deps.temporal,
      taskQueue: deps.config.temporal.taskQueue,
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
