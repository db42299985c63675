/**
 * What every benchmark needs, once: command-line settings, the median, RSS sampling, a run of its own (a
 * fresh database migrated by the owner, an S3 prefix and a task queue, removed at the end) and the
 * connection the API and the worker use — the application role, so row-level security applies to the
 * figures as it does in service (db/rls.ts, db/unitOfWork.ts). Fixtures go through the owner's connection,
 * like the tests' (test/helpers/env.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import knexFactory, { type Knex } from 'knex';
import type { Client } from '@temporalio/client';
import type { AppDeps } from '../api/context';
import { loadConfig, type Config } from '../common/config';
import { createLogger } from '../common/logger';
import { createMailer } from '../common/mailer';
import { deriveKey } from '../common/secrets';
import { createStorage, type Storage } from '../common/storage';
import { createTemporalClient } from '../common/temporal';
import { createKnex, migrateLatest } from '../db/knex';
import { actingStatement } from '../db/unitOfWork';
import { generateKey } from '../domain/identity/keyFormat';
import { hashPassword } from '../domain/identity/passwords';
import { sessionKeys, startSession, type PersonRef } from '../domain/identity/sessions';

export const MB = 1024 * 1024;

/** `--name value` from the command line as a number, or `fallback`. */
export function arg(name: string, fallback: number): number {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
}

/** The `p`th percentile of ascending `sorted` values (nearest rank). */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Throughput and latency of a load round. */
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  count: number;
}

/**
 * A load round: `count` calls, `concurrency` at a time, each lane starting call `i` when its last one ended;
 * `one(i)` makes call `i` and resolves to its latency in ms. Throughput over the round's wall time.
 */
export async function loadRound(
  count: number,
  concurrency: number,
  one: (i: number) => Promise<number>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  const began = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) latencies.push(await one(next++));
    }),
  );
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  latencies.sort((a, b) => a - b);
  return { rps: count / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), count };
}

/** Rounds merged: throughput over their total time; latency figures the median of the rounds'. */
export function mergeRounds(results: LoadResult[]): LoadResult {
  const total = results.reduce((s, r) => s + r.count, 0);
  const seconds = results.reduce((s, r) => s + r.count / r.rps, 0);
  return {
    rps: total / seconds,
    p50: median(results.map((r) => r.p50)),
    p99: median(results.map((r) => r.p99)),
    count: total,
  };
}

/** Runs the benchmark's `main`, exiting 0 when it ends (open handles or not) and 1 when it throws. */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}

/**
 * Samples `read` (an RSS in bytes) every `everyMs` until `stop()`, which resolves to the highest value read
 * (at least the first one).
 */
export function sampleRss(read: () => number | Promise<number>, everyMs = 10): { stop(): Promise<number> } {
  let peak = 0;
  let sampling = true;
  const loop = (async () => {
    while (sampling) {
      peak = Math.max(peak, await read());
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      sampling = false;
      await loop;
      return peak;
    },
  };
}

/** Writes `lines` to `file`, waiting for the stream to drain. */
export async function writeLines(
  file: string,
  lines: Iterable<string> | AsyncIterable<string>,
): Promise<void> {
  const out = createWriteStream(file);
  for await (const line of lines)
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
}

export interface BenchRun {
  runId: string;
  config: Config;
  /** the environment `config` was read from (for child processes of the run) */
  env: Record<string, string>;
  storage: Storage;
  /** the owner's connection (outside row-level security): fixtures only */
  knex: Knex;
  /**
   * the application role's connection, as the API and the worker have it (DATABASE_POOL_MAX connections;
   * objection's default knex)
   */
  appKnex: Knex;
  /** closes the connections, drops the database, removes the run's objects */
  close(): Promise<void>;
}

/**
 * A run of its own: a database `ds_bench…` created and migrated (kept at the end when BENCH_KEEP_DB is
 * set), the S3 prefix `bench/<run>/` and the task queue `bench-<run>`; `settings` overrides or adds
 * environment variables (LOG_LEVEL defaults to warn).
 */
export async function startBenchRun(settings: Record<string, string> = {}): Promise<BenchRun> {
  const runId = `bench${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const base = loadConfig();
  const database = `ds_${runId}`;
  const admin = knexFactory({ client: 'pg', connection: base.databaseUrl, pool: { min: 0, max: 1 } });
  const url = new URL(base.databaseUrl);
  url.pathname = `/${database}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    DATABASE_URL: url.toString(),
    S3_PREFIX: `bench/${runId}/`,
    TEMPORAL_TASK_QUEUE: `bench-${runId}`,
    ...settings,
  };
  const config = loadConfig(env);
  const storage = createStorage(config);
  await admin.raw('create database ??', [database]);
  const knex = createKnex(config.databaseUrl, 4);
  // created last: objection's default knex is the application role's, like in the API and the worker
  const appKnex = createKnex(config.databaseUrl, config.databasePoolMax, { actAs: config.databaseAppRole });
  const close = async () => {
    await appKnex.destroy();
    await knex.destroy();
    if (process.env.BENCH_KEEP_DB) console.log(`[bench] kept database ${database}`);
    else await admin.raw('drop database if exists ?? with (force)', [database]).catch(() => undefined);
    await admin.destroy();
    const keys: string[] = [];
    const listing = storage.client.listObjectsV2(storage.bucket, config.s3.prefix, true);
    for await (const item of listing as AsyncIterable<{ name?: string }>) if (item.name) keys.push(item.name);
    if (keys.length) await storage.client.removeObjects(storage.bucket, keys);
  };
  try {
    await migrateLatest(knex);
  } catch (err) {
    await close();
    throw err;
  }
  return { runId, config, env, storage, knex, appKnex, close };
}

/**
 * A run that serves the API (startBenchRun with silent logs and 20 connections), a Temporal client and the
 * API's dependencies as served: the application role's connection, so row-level security applies.
 */
export async function startApiBenchRun(): Promise<{ run: BenchRun; temporal: Client; deps: AppDeps }> {
  const run = await startBenchRun({ LOG_LEVEL: 'silent', DATABASE_POOL_MAX: '20' });
  const { config } = run;
  const temporal = createTemporalClient(config);
  const logger = createLogger('silent', 'bench');
  const deps: AppDeps = {
    config,
    knex: run.appKnex,
    temporal,
    logger,
    storage: run.storage,
    mailer: createMailer(config, logger),
  };
  return { run, temporal, deps };
}

/**
 * Runs `fn` acting for `companyId`, as the worker's activities do (activities/reports.ts, comparisons.ts).
 * Awaited inside the scope (`actingStatement`), so a lazy knex builder returned by `fn` runs in it too.
 */
export function asWorker<T>(companyId: string, fn: () => PromiseLike<T>): Promise<T> {
  return actingStatement({ companyId }, fn);
}

/** A Premium company and its admin, through the owner's connection. */
export async function seedCompany(knex: Knex): Promise<{ companyId: string; personId: string }> {
  const companyId = randomUUID();
  const personId = randomUUID();
  await knex('companies').insert({ id: companyId, name: 'Bench Co', status: 'active', plan: 'premium' });
  await knex('people').insert({
    id: personId,
    companyId,
    email: `bench-${personId}@example.test`,
    name: 'Bench',
    role: 'admin',
    status: 'active',
  });
  return { companyId, personId };
}

/**
 * A Premium company `Bench` and `count` active admins (`bench-<i>@example.test`, one random password), through
 * the owner's connection.
 */
export async function seedAdmins(knex: Knex, count: number) {
  const companyId = randomUUID();
  await knex('companies').insert({ id: companyId, name: 'Bench', plan: 'premium' });
  const passwordHash = await hashPassword(randomUUID());
  const people = Array.from({ length: count }, (_, i) => ({
    id: randomUUID(),
    companyId,
    email: `bench-${i}@example.test`,
    role: 'admin',
    status: 'active',
    passwordHash,
  }));
  await knex('people').insert(people);
  return { companyId, people };
}

/** A session (as a password sign-in starts it) for each person; their access tokens in order. */
export async function sessionTokens(knex: Knex, config: Config, people: PersonRef[]): Promise<string[]> {
  const tokens: string[] = [];
  for (const p of people) {
    const pair = await knex.transaction((trx) =>
      startSession(trx, sessionKeys(config.secretKey), p, { method: 'password' }),
    );
    tokens.push(pair.accessToken);
  }
  return tokens;
}

/** An API key of the person with `files:write`; its bearer token. */
export async function seedUploadKey(
  knex: Knex,
  config: Config,
  owner: { companyId: string; personId: string },
): Promise<string> {
  const key = generateKey(deriveKey(config.secretKey, 'api-key'));
  await knex('apiKeys').insert({
    id: randomUUID(),
    ...owner,
    name: 'bench',
    scopes: ['files:write'],
    identifier: key.identifier,
    secretFingerprint: key.secretFingerprint,
  });
  return key.key;
}

/**
 * A CSV or XLSX file with one version per source (a local file's path, or the bytes), as uploads leave them
 * (the objects in MinIO, the files, datasets and fileVersions rows); the version ids in order. The comparison
 * tests seed their fixtures through it too (test/comparisons/seed.ts).
 */
export async function seedVersions(
  run: Pick<BenchRun, 'knex' | 'storage'>,
  owner: { companyId: string; personId: string },
  format: 'csv' | 'xlsx',
  sources: Array<string | Buffer>,
  sizes: number[],
  options: { visibility?: 'private' | 'company' } = {},
): Promise<{ fileId: string; versionIds: string[] }> {
  const { knex, storage } = run;
  const { companyId, personId } = owner;
  const fileId = randomUUID();
  const datasetId = randomUUID();
  const originalName = `bench.${format}`;
  await knex('files').insert({
    id: fileId,
    companyId,
    datasetId,
    originalName,
    uploadedByPersonId: personId,
    currentVersion: sources.length,
    ...(options.visibility ? { visibility: options.visibility } : {}),
  });
  await knex('datasets').insert({ id: datasetId, companyId, fileId });
  const versionIds: string[] = [];
  for (const [i, source] of sources.entries()) {
    const id = randomUUID();
    const objectKey = storage.key('files', companyId, fileId, id);
    if (typeof source === 'string') await storage.client.fPutObject(storage.bucket, objectKey, source);
    else await storage.client.putObject(storage.bucket, objectKey, source);
    await knex('fileVersions').insert({
      id,
      companyId,
      fileId,
      datasetId,
      version: i + 1,
      originalName,
      format,
      contentType: format === 'csv' ? 'text/csv' : 'application/octet-stream',
      delimiter: format === 'csv' ? ',' : null,
      sizeBytes: sizes[i],
      objectKey,
      uploadedByPersonId: personId,
    });
    versionIds.push(id);
  }
  return { fileId, versionIds };
}

/** A requested comparison of a file's first two versions, queued (as POST /comparisons leaves it); its id. */
export async function seedComparisonRow(
  knex: Knex,
  companyId: string,
  fileId: string,
  versionIds: string[],
  keyColumns: string[] | null,
): Promise<string> {
  const id = randomUUID();
  await knex('comparisons').insert({
    id,
    companyId,
    fileId,
    baseVersionId: versionIds[0],
    targetVersionId: versionIds[1],
    baseVersion: 1,
    targetVersion: 2,
    automatic: false,
    keyColumns: keyColumns ? JSON.stringify(keyColumns) : null,
    status: 'queued',
  });
  return id;
}
