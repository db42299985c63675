/**
 * The test harness: one isolated database (created from the configured server, migrated, dropped at the
 * end), one S3 key prefix and one Temporal task queue per run (`test-<runId>`, with `-<suffix>` queues of its
 * own for some tests; their Schedules and still-running workflows are removed at the end), against the real
 * local services.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import knexFactory, { type Knex } from 'knex';
import { loadConfig, type Config } from '../../common/config';
import { createLogger, type Logger } from '../../common/logger';
import { createStorage, type Storage } from '../../common/storage';
import { createMailer } from '../../common/mailer';
import { startMailbox, stopMailbox } from './mailbox';
import { cleanUpRunTemporal, cleanupSummary } from './temporalCleanup';
import { createTemporalClient } from '../../common/temporal';
import { createKnex, migrateLatest } from '../../db/knex';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/context';
import type { RouteSpec } from '../../api/routing';
import { createWorker } from '../../worker/worker';
import { installTemporalRuntime } from '../../worker/runtime';
import type { FanOut } from '../../db/outbox';
import type { Resolver } from '../../domain/webhooks/targets';
import type { AnalysisStep } from '../../domain/reports/engine';
import type { BeforeSaveHook } from '../../domain/comparisons/run';
import type { BillingChunkHook } from '../../domain/billing/finalize';

export const ROOT = path.resolve(__dirname, '../../..');

export interface TestEnv {
  runId: string;
  config: Config;
  /**
   * The owner's connection (the migrating user, outside row-level security): fixtures and assertions.
   * The app (`deps.knex`) and the workers act as the application role (db/rls.ts).
   */
  knex: Knex;
  /** The application role's connection: what the API and the workers use; row-level security applies. */
  appKnex: Knex;
  logger: Logger;
  storage: Storage;
  temporal: Client;
  deps: AppDeps;
  /** base URL of the API listening on loopback for this run */
  baseUrl: string;
}

let env: TestEnv | undefined;
let server: http.Server | undefined;
let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
const cleanups: Array<() => Promise<void>> = [];

function adminUrl(databaseUrl: string, database: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function setUpEnv(): Promise<TestEnv> {
  const runId = `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const base = loadConfig({ ...process.env, NODE_ENV: 'test' });
  const database = `ds_${runId}`;
  const smtpPort = await startMailbox();
  await reapStaleDatabases();
  await withAdmin((admin) => admin.raw('create database ??', [database]));
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL: adminUrl(base.databaseUrl, database),
    S3_PREFIX: `test-runs/${runId}/`,
    TEMPORAL_TASK_QUEUE: `test-${runId}`,
    OUTBOX_IDLE_WAIT_MS: '1000',
    REPORT_WORK_DIR: path.join(os.tmpdir(), `reports-${runId}`),
    // Every test request comes from 127.0.0.1; call() sends each from its own X-Forwarded-For address
    // (one trusted hop), so per-address budgets and buckets do not leak between tests.
    TRUST_PROXY_HOPS: '1',
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
  });
  const knex = createKnex(config.databaseUrl, 10);
  await migrateLatest(knex);
  // created last: objection's default knex is the application role's, like in the API and the worker
  const appKnex = createKnex(config.databaseUrl, 20, { actAs: config.databaseAppRole });
  const logger = createLogger(config.logLevel, 'test');
  // the SDK's own lines (worker state changes…) only at warn and above, through our logger
  installTemporalRuntime(createLogger(process.env.TEST_LOG_LEVEL ?? 'warn', 'temporal-sdk'));
  const storage = createStorage(config);
  const temporal = createTemporalClient(config);
  const mailer = createMailer(config, logger);
  const deps: AppDeps = { config, logger, knex: appKnex, temporal, storage, mailer };

  server = http.createServer(createApp(deps, { extraRoutes: testRoutes }).callback());
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  env = {
    runId,
    config,
    knex,
    appKnex,
    logger,
    storage,
    temporal,
    deps,
    baseUrl: `http://127.0.0.1:${port}`,
  };
  return env;
}

export async function tearDownEnv(): Promise<void> {
  if (!env) return;
  const current = env;
  env = undefined;
  const problems: unknown[] = [];
  const attempt = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      problems.push(err);
    }
  };
  for (const cleanup of cleanups.reverse()) await attempt(cleanup);
  await attempt(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));
  // the workers have stopped: the run's Schedules and the workflows still running on its task queues go
  // (bounded, never fails the run; what it could not do is written to stderr)
  const temporalCleanup = await cleanUpRunTemporal(current.temporal, current.config.temporal.taskQueue, {
    reason: `test run ${current.runId} ended`,
  });
  const summary = `Temporal cleanup of test run ${current.runId}: ${cleanupSummary(temporalCleanup)}`;
  if (temporalCleanup.errors.length || temporalCleanup.capped || temporalCleanup.timedOut)
    console.error(summary);
  else current.logger.info(summary);
  await attempt(() => current.appKnex.destroy());
  await attempt(() => current.knex.destroy());
  await attempt(() => current.temporal.connection.close());
  await attempt(() => stopMailbox());
  await attempt(() => dropDatabase(`ds_${current.runId}`));
  await attempt(() => rm(current.config.reports.workDir, { recursive: true, force: true }));
  // remove every object this run wrote
  await attempt(async () => {
    const { storage, config } = current;
    const keys: string[] = [];
    const stream = storage.client.listObjectsV2(storage.bucket, config.s3.prefix, true);
    for await (const item of stream as AsyncIterable<{ name?: string }>) if (item.name) keys.push(item.name);
    if (keys.length) await storage.client.removeObjects(storage.bucket, keys);
  });
  if (problems.length) throw problems[0];
}

async function withAdmin<T>(fn: (admin: Knex) => Promise<T>): Promise<T> {
  const base = loadConfig(process.env);
  const admin = knexFactory({ client: 'pg', connection: base.databaseUrl, pool: { min: 0, max: 1 } });
  try {
    return await fn(admin);
  } finally {
    await admin.destroy();
  }
}

async function dropDatabase(name: string): Promise<void> {
  await withAdmin((admin) => admin.raw('drop database if exists ?? with (force)', [name]));
}

/** Databases of runs that died without cleaning up (older than 3 hours) are dropped at the next run. */
async function reapStaleDatabases(): Promise<void> {
  const rows = await withAdmin(
    (admin) =>
      admin('pg_database').select('datname').where('datname', 'like', 'ds_t%') as Promise<
        Array<{ datname: string }>
      >,
  );
  for (const { datname } of rows) {
    const stamp = /^ds_t([0-9a-z]+?)[0-9a-f]{6}$/.exec(datname)?.[1];
    const startedAt = stamp ? parseInt(stamp, 36) : NaN;
    if (Number.isFinite(startedAt) && Date.now() - startedAt > 3 * 3600_000) await dropDatabase(datname);
  }
}

export function testEnv(): TestEnv {
  if (!env) throw new Error('test environment not set up (test/setup.ts)');
  return env;
}

/** Registers a cleanup that runs when the whole run ends. */
export function atEnd(fn: () => Promise<void>): void {
  cleanups.push(fn);
}

/** Workflow code is bundled once per run and shared by every worker the tests start. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
  });
  return bundle;
}

/**
 * A real worker connected to the local Temporal server, on the run's task queue (or that of `config`);
 * stopped at the end.
 */
export async function startWorker(
  options: {
    config?: Config;
    fanOut?: FanOut;
    webhookResolver?: Resolver;
    reportSteps?: readonly AnalysisStep[];
    comparisonBeforeSave?: BeforeSaveHook;
    billingChunkHook?: BillingChunkHook;
  } = {},
): Promise<{ worker: Worker; stop(): Promise<void> }> {
  const { appKnex: knex, logger } = testEnv();
  const config = options.config ?? testEnv().config;
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await createWorker({
    config,
    knex,
    logger,
    connection,
    fanOut: options.fanOut,
    webhookResolver: options.webhookResolver,
    reportSteps: options.reportSteps,
    comparisonBeforeSave: options.comparisonBeforeSave,
    billingChunkHook: options.billingChunkHook,
    workflowBundle: await workflowBundle(),
  });
  const running = worker.run();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    worker.shutdown();
    await running.catch(() => undefined);
    await connection.close();
  };
  atEnd(stop);
  return { worker, stop };
}

/** Routes mounted only in tests, to exercise the shared machinery (validation, errors). */
const testRoutes: RouteSpec[] = [
  {
    method: 'post',
    path: '/_test/echo',
    summary: 'test only',
    tag: 'Test',
    access: { public: true },
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 10 },
        count: { type: 'integer', minimum: 1 },
      },
    },
    query: { type: 'object', additionalProperties: false, properties: { verbose: { type: 'boolean' } } },
    responses: { 200: { description: 'echo' } },
    handler: async (_ctx, input) => ({ body: input }),
  },
  {
    method: 'get',
    path: '/_test/whoami',
    summary: 'test only: any signed-in person, or a key with files:read',
    tag: 'Test',
    access: { roles: ['admin', 'employee'], keyScope: 'files:read' },
    responses: { 200: { description: 'the principal' } },
    handler: async (ctx) => ({ body: ctx.state.auth }),
  },
  {
    method: 'post',
    path: '/_test/whoami',
    summary: 'test only: a write any signed-in person, or a key with files:write, may make',
    tag: 'Test',
    access: { roles: ['admin', 'employee'], keyScope: 'files:write' },
    responses: { 200: { description: 'the principal' } },
    handler: async (ctx) => ({ body: ctx.state.auth }),
  },
  {
    method: 'get',
    path: '/_test/admin-only',
    summary: 'test only: admins, or a key with the admin-only scope audit:read',
    tag: 'Test',
    access: { roles: ['admin'], keyScope: 'audit:read' },
    responses: { 200: { description: 'the principal' } },
    handler: async (ctx) => ({ body: ctx.state.auth }),
  },
  {
    method: 'get',
    path: '/_test/boom',
    summary: 'test only',
    tag: 'Test',
    access: { public: true },
    responses: { 500: { description: 'always fails' } },
    handler: async () => {
      throw new Error('secret internal detail: connection string postgres://user:pw@db');
    },
  },
];
