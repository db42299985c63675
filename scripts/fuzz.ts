/**
 * The API fuzzer: schemathesis over the service's own `/openapi.json`, once with a session token and once
 * with an API key holding every scope, failing on any 5xx and on any answer the document does not allow
 * (status code, response schema, content type, response headers, 405 and Allow for undocumented methods).
 *
 *   npm run fuzz                  (scripts/fuzz.sh: build, services, schemathesis, then this)
 *   node dist/scripts/fuzz.js     (schemathesis already installed: .local/venv-fuzz)
 *
 * It sets up everything itself, on this machine only: a fresh database (dropped at the end), an S3 prefix
 * of its own (emptied at the end), a Temporal task queue no worker listens on (the workflows the API
 * starts are terminated at the end) and no mail leaves (a mailer that drops mail). No worker runs, so no
 * webhook delivery is ever attempted; webhook addresses are not resolved (WEBHOOK_ALLOW_PRIVATE_TARGETS),
 * so no DNS query leaves either. The API listens on 127.0.0.1 only, and schemathesis is pointed at it.
 *
 * In front of the app, each request gets a client address of its own (X-Forwarded-For, one trusted hop)
 * so per-address buckets do not turn every public call into 429, and the session run's placeholder token
 * is swapped, request by request, for one of several admins' sessions (renewed as the run goes: the fuzzer
 * removes, demotes and disables the admins it can list, and a sign-out ends its session) so the
 * 300-a-minute session budget is not the only thing tested. The key run uses a fresh Premium key (600 a
 * minute, the highest budget) with every scope, in a company of its own, and schemathesis paces it at 590
 * requests a minute; the two runs go side by side.
 *
 * Figures: FUZZ_CHECKS (schemathesis checks, comma-separated), FUZZ_MAX_EXAMPLES (per operation,
 * default 12), FUZZ_MAX_SECONDS (per run, default 100), FUZZ_WORKERS (default 2), FUZZ_SEED (default 1,
 * fixed so CI runs are reproducible), FUZZ_PHASES (default examples,coverage,fuzzing), FUZZ_RUNS (default
 * session,api-key), FUZZ_LOG_LEVEL (API log, default silent).
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { createApp } from '../api/app';
import { generateKey } from '../domain/identity/keyFormat';
import { hashPassword } from '../domain/identity/passwords';
import { sessionKeys, startSession } from '../domain/identity/sessions';
import { SCOPES } from '../api/routing';
import { loadConfig } from '../common/config';
import { createLogger } from '../common/logger';
import type { Mailer } from '../common/mailer';
import { deriveKey } from '../common/secrets';
import { createStorage } from '../common/storage';
import { createTemporalClient } from '../common/temporal';
import { createKnex, migrateLatest } from '../db/knex';

const ROOT = path.resolve(__dirname, '../..');
const ST = process.env.FUZZ_ST ?? path.join(ROOT, '.local/venv-fuzz/bin/st');
const MAX_EXAMPLES = Number(process.env.FUZZ_MAX_EXAMPLES ?? 12);
const MAX_SECONDS = Number(process.env.FUZZ_MAX_SECONDS ?? 100);
const WORKERS = Number(process.env.FUZZ_WORKERS ?? 2);
const SEED = process.env.FUZZ_SEED ?? '1';
const PHASES = process.env.FUZZ_PHASES ?? 'examples,coverage,fuzzing';
const CHECKS =
  process.env.FUZZ_CHECKS ??
  [
    'not_a_server_error',
    'status_code_conformance',
    'response_schema_conformance',
    'content_type_conformance',
    'response_headers_conformance',
    'unsupported_method',
    'allow_header_conformance',
  ].join(',');
const SESSION_PLACEHOLDER = 'fuzz-session-token';
const ADMINS = 8;
const POOL_RENEWAL = 150;

async function withAdmin<T>(url: string, fn: (admin: Knex) => Promise<T>): Promise<T> {
  const admin = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
  try {
    return await fn(admin);
  } finally {
    await admin.destroy();
  }
}

/** Databases of fuzz runs that died without cleaning up (older than 3 hours). */
async function reapStale(url: string): Promise<void> {
  await withAdmin(url, async (admin) => {
    const rows = (await admin('pg_database')
      .select('datname')
      .where('datname', 'like', 'ds_fuzz_%')) as Array<{ datname: string }>;
    for (const { datname } of rows) {
      const stamp = /^ds_fuzz_([0-9a-z]+?)[0-9a-f]{6}$/.exec(datname)?.[1];
      const startedAt = stamp ? parseInt(stamp, 36) : NaN;
      if (Number.isFinite(startedAt) && Date.now() - startedAt > 3 * 3600_000)
        await admin.raw('drop database if exists ?? with (force)', [datname]);
    }
  });
}

/** Runs schemathesis once; resolves with its exit code. */
async function schemathesis(
  label: string,
  url: string,
  token: string,
  reportDir: string,
  extra: string[] = [],
): Promise<number> {
  const args = [
    'run',
    url,
    ...extra,
    '--checks',
    CHECKS,
    '--header',
    `Authorization: Bearer ${token}`,
    '--phases',
    PHASES,
    '--max-examples',
    String(MAX_EXAMPLES),
    '--max-time',
    String(MAX_SECONDS),
    '--workers',
    String(WORKERS),
    '--seed',
    SEED,
    '--request-timeout',
    '15',
    '--generation-database',
    'none',
    '--suppress-health-check',
    'all',
    '--no-color',
    '--report',
    'junit',
    '--report-junit-path',
    path.join(reportDir, `${label}.xml`),
  ];
  console.log(
    `[fuzz] ${label}: st ${args.map((a) => (a.startsWith('Authorization') ? 'Authorization: Bearer …' : a)).join(' ')}`,
  );
  // schemathesis's output goes to a log file beside the JUnit report, not to the terminal: its closing line has
  // pytest's shape ("=== 3 warnings in 120.43s ===") and a CI that reads closing lines would take it for a
  // pytest run that executed no test. A summary is printed instead; on a failure, the whole log, each line marked.
  const logPath = path.join(reportDir, `${label}.log`);
  const log = fs.openSync(logPath, 'w');
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(ST, args, { stdio: ['ignore', log, log], cwd: reportDir });
    child.on('error', reject);
    child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 128 : 1)));
  }).finally(() => fs.closeSync(log));
  const text = fs.readFileSync(logPath, 'utf8');
  const cases = /^\s*(\d+) generated, (.*)$/m.exec(text);
  console.log(
    `[fuzz] ${label}: exit ${code}; test cases: ${cases ? `${cases[1]} generated, ${cases[2]}` : 'none counted'} (log: ${logPath})`,
  );
  if (code !== 0) {
    for (const line of text.split('\n')) console.log(`[st] ${line.replace(/={3,}/g, '-')}`);
  }
  return code;
}

async function main(): Promise<number> {
  if (!fs.existsSync(ST)) {
    console.error(`[fuzz] ${ST} not found: run scripts/install-fuzzer.sh (or npm run fuzz)`);
    return 2;
  }
  const base = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const database = `ds_fuzz_${runId}`;
  const dbUrl = new URL(base.databaseUrl);
  dbUrl.pathname = `/${database}`;
  await reapStale(base.databaseUrl);
  await withAdmin(base.databaseUrl, (admin) => admin.raw('create database ??', [database]));
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.FUZZ_LOG_LEVEL ?? 'silent',
    DATABASE_URL: dbUrl.toString(),
    S3_PREFIX: `fuzz-runs/${runId}/`,
    TEMPORAL_TASK_QUEUE: `fuzz-${runId}`,
    TRUST_PROXY_HOPS: '1',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    HOST: '127.0.0.1',
  });
  const knex = createKnex(config.databaseUrl, 10);
  const temporal = createTemporalClient(config);
  const storage = createStorage(config);
  const logger = createLogger(config.logLevel, 'fuzz-api');
  const mailer: Mailer = { send: () => Promise.resolve() };
  const reportDir = path.join(ROOT, '.local/fuzz', runId);
  fs.mkdirSync(reportDir, { recursive: true });
  let server: http.Server | undefined;
  try {
    await migrateLatest(knex);

    // the companies set up for the fuzzer, one per run so the two runs go side by side without one changing
    // what the other tests (the session run changes its company's plan and status, removes, demotes and
    // disables its admins): Premium (the highest key budget), admins with sessions, one key
    const companyId = randomUUID();
    const keyCompanyId = randomUUID();
    await knex('companies').insert([
      { id: companyId, name: 'Fuzz Inc', status: 'active', plan: 'premium' },
      { id: keyCompanyId, name: 'Fuzz Keys Inc', status: 'active', plan: 'premium' },
    ]);
    const passwordHash = await hashPassword(randomBytes(18).toString('base64url'));
    let admins = 0;
    /** A new active admin of a fuzz company (the session run's unless named) and a session of theirs. */
    const freshAdmin = async (company = companyId) => {
      admins += 1;
      const person = { id: randomUUID(), companyId: company, role: 'admin' as const };
      await knex('people').insert({
        ...person,
        email: `fuzz-admin-${admins}@example.test`,
        name: `Fuzz Admin ${admins}`,
        status: 'active',
        passwordHash,
      });
      const pair = await knex.transaction((trx) =>
        startSession(trx, sessionKeys(config.secretKey), person, { method: 'password' }),
      );
      return { personId: person.id, token: pair.accessToken };
    };
    /** A new key with every scope, of the key run's company, owned by a new admin of that company. */
    const freshKey = async () => {
      const owner = await freshAdmin(keyCompanyId);
      const created = generateKey(deriveKey(config.secretKey, 'api-key'));
      await knex('apiKeys').insert({
        id: randomUUID(),
        companyId: keyCompanyId,
        personId: owner.personId,
        name: 'fuzz key, every scope',
        scopes: [...SCOPES],
        identifier: created.identifier,
        secretFingerprint: created.secretFingerprint,
      });
      return created.key;
    };

    // The session run's pool: renewed every POOL_RENEWAL requests (the fuzzer removes, demotes and disables
    // the admins it can list, which would leave every later request a 401 or 403), and a sign-out, which
    // ends the session it is sent with, always gets an admin of its own.
    let pool = await Promise.all(Array.from({ length: ADMINS }, () => freshAdmin().then((a) => a.token)));
    let renewing: Promise<void> | undefined;
    let served = 0;
    const app = createApp({ config, logger, knex, temporal, storage, mailer });
    const handle = app.callback();
    server = http.createServer((req, res) => {
      req.headers['x-forwarded-for'] = `198.18.${randomInt(0, 256)}.${randomInt(1, 255)}`;
      if (req.headers.authorization !== `Bearer ${SESSION_PLACEHOLDER}`) {
        void handle(req, res);
        return;
      }
      served += 1;
      if (served % POOL_RENEWAL === 0 && !renewing) {
        renewing = Promise.all(Array.from({ length: ADMINS }, () => freshAdmin().then((a) => a.token)))
          .then((tokens) => void (pool = tokens))
          .catch((err: unknown) => console.error('[fuzz] could not renew the sessions', err))
          .finally(() => (renewing = undefined));
      }
      if (req.method === 'POST' && req.url?.split('?')[0] === '/auth/logout') {
        freshAdmin().then(
          (admin) => {
            req.headers.authorization = `Bearer ${admin.token}`;
            void handle(req, res);
          },
          (err: unknown) => {
            console.error('[fuzz] could not start a session', err);
            res.writeHead(503).end();
          },
        );
        return;
      }
      req.headers.authorization = `Bearer ${pool[served % pool.length]}`;
      void handle(req, res);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { address, port } = server.address() as AddressInfo;
    if (address !== '127.0.0.1') throw new Error(`the fuzzed API must listen on 127.0.0.1, not ${address}`);
    const url = `http://127.0.0.1:${port}/openapi.json`;
    console.log(`[fuzz] API on http://127.0.0.1:${port}, database ${database}, reports in ${reportDir}`);

    const started = Date.now();
    const runs = (process.env.FUZZ_RUNS ?? 'session,api-key').split(',');
    // side by side: the key run is paced by its budget, not by the machine, so it costs the session run little
    const [session, key] = await Promise.all([
      runs.includes('session') ? schemathesis('session', url, SESSION_PLACEHOLDER, reportDir) : 0,
      runs.includes('api-key')
        ? // paced just under the key's budget (Premium, 600 a minute): a 429 tests nothing behind it
          freshKey().then((token) =>
            schemathesis('api-key', url, token, reportDir, ['--rate-limit', '590/m']),
          )
        : 0,
    ]);
    const seconds = Math.round((Date.now() - started) / 1000);
    console.log(`[fuzz] session run exit ${session}, API-key run exit ${key}, ${seconds} s`);
    return session === 0 && key === 0 ? 0 : 1;
  } finally {
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
    }
    await cleanUp(knex, temporal, storage, config, database, base.databaseUrl);
  }
}

async function cleanUp(
  knex: Knex,
  temporal: ReturnType<typeof createTemporalClient>,
  storage: ReturnType<typeof createStorage>,
  config: ReturnType<typeof loadConfig>,
  database: string,
  adminUrl: string,
): Promise<void> {
  const attempt = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      console.error(`[fuzz] cleaning up ${what} failed:`, err);
    }
  };
  // the workflows the API started wait on a queue no worker reads: end them
  await attempt('workflows', async () => {
    const query = `TaskQueue = '${config.temporal.taskQueue}' AND ExecutionStatus = 'Running'`;
    for await (const wf of temporal.workflow.list({ query })) {
      await temporal.workflow
        .getHandle(wf.workflowId, wf.runId)
        .terminate('fuzz run over')
        .catch(() => undefined);
    }
  });
  await attempt('temporal', () => temporal.connection.close());
  await attempt('knex', () => knex.destroy());
  await attempt('database', () =>
    withAdmin(adminUrl, (admin) => admin.raw('drop database if exists ?? with (force)', [database])),
  );
  await attempt('objects', async () => {
    const keys: string[] = [];
    const stream = storage.client.listObjectsV2(storage.bucket, config.s3.prefix, true);
    for await (const item of stream as AsyncIterable<{ name?: string }>) if (item.name) keys.push(item.name);
    if (keys.length) await storage.client.removeObjects(storage.bucket, keys);
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error('[fuzz] failed:', err);
    process.exit(1);
  },
);
