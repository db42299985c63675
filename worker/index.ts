/** Worker process entry: `node dist/worker/index.js`. */
import { NativeConnection } from '@temporalio/worker';
import { Client } from '@temporalio/client';
import { loadConfig, ConfigError, serviceStartProblems } from '../common/config';
import { createLogger } from '../common/logger';
import { createKnex } from '../db/knex';
import { checkEngine, removeStaleWorkFolders, STALE_WORK_FOLDER_MS } from '../domain/reports/engine';
import {
  createWorker,
  ensureOutboxDispatcher,
  ensureWebhookRetentionSchedule,
  ensureFileOrphanSweepSchedule,
  ensureBillingSchedule,
  ensureNotificationRetentionSchedule,
  ensureAuditRetentionSchedule,
} from './worker';
import { installTemporalRuntime } from './runtime';

async function main(): Promise<void> {
  const config = loadConfig();
  const refused = serviceStartProblems(config);
  if (refused.length > 0) throw new ConfigError(refused);
  const logger = createLogger(config.logLevel, 'worker');
  installTemporalRuntime(logger);
  // the analysis engine first: a worker that could not build a report stops here, with the reason
  const engine = await checkEngine(config.reports);
  logger.info(
    {
      duckdb: engine.version,
      threads: config.reports.threads,
      memoryLimitMb: config.reports.memoryLimitMb,
      workDir: config.reports.workDir,
    },
    'analysis engine ready',
  );
  // what builds of a worker that died left in the work folder, now and hourly
  const sweepWorkDir = () =>
    removeStaleWorkFolders(config.reports.workDir).then(
      (removed) => {
        if (removed.length > 0) logger.info({ removed }, 'stale work folders removed');
      },
      (err: unknown) => logger.warn({ err }, 'stale work folders could not be removed'),
    );
  await sweepWorkDir();
  const workDirSweep = setInterval(() => void sweepWorkDir(), STALE_WORK_FOLDER_MS).unref();
  const knex = createKnex(config.databaseUrl, config.databasePoolMax, { actAs: config.databaseAppRole });
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  // one client on the worker's connection, for the activities and for the system workflows below
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const worker = await createWorker({ config, knex, logger, connection, client });

  // Temporal's runtime catches SIGTERM/SIGINT and shuts the worker down gracefully: it stops polling,
  // lets running activities finish (shutdownGraceTime) and then run() resolves, so we close the rest.
  const running = worker.run();
  const dispatcherId = await ensureOutboxDispatcher(client, config);
  const retentionScheduleId = await ensureWebhookRetentionSchedule(client, config);
  const orphanSweepScheduleId = await ensureFileOrphanSweepSchedule(client, config);
  const billingScheduleId = await ensureBillingSchedule(client, config);
  const notificationRetentionId = await ensureNotificationRetentionSchedule(client, config);
  const auditRetentionId = await ensureAuditRetentionSchedule(client, config);
  logger.info(
    {
      taskQueue: config.temporal.taskQueue,
      dispatcherId,
      retentionScheduleId,
      orphanSweepScheduleId,
      billingScheduleId,
      notificationRetentionId,
      auditRetentionId,
    },
    'worker running',
  );
  try {
    await running;
  } finally {
    clearInterval(workDirSweep);
    await connection.close();
    await knex.destroy();
    logger.info('worker stopped');
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(err);
  process.exit(1);
});
