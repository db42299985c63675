/**
 * A worker in a process of its own, for the test that kills it (SIGKILL) in the middle of a delivery.
 * Configured from the environment like the real worker; the workflow bundle comes prebuilt from a file.
 * Prints "ready" once it polls its task queue.
 */
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import { createKnex } from '../../db/knex';
import { createWorker } from '../../worker/worker';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const knex = createKnex(config.databaseUrl, 5, { actAs: config.databaseAppRole });
  const logger = createLogger(config.logLevel, 'test-worker-process');
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await createWorker({
    config,
    knex,
    logger,
    connection,
    workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH ?? '' },
  });
  const running = worker.run();
  process.stdout.write('ready\n');
  await running;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
