/**
 * Webhook fan-out benchmark: N events to M local receivers through the real outbox, dispatcher, delivery
 * workflows (local Temporal) and HTTP, against the same deliveries made by a plain loop of signed POSTs.
 *
 *   node dist/bench/webhookFanout.js
 *
 * Environment (all optional): BENCH_EVENTS (burst size, default 2000), BENCH_RECEIVERS (M, default 2),
 * BENCH_RATE (offered events per second in the latency phase, default 50), BENCH_SECONDS (length of the
 * latency phase, default 30), plus the service's own DATABASE_URL / TEMPORAL_ADDRESS. It uses a database
 * and a task queue of its own and removes the database at the end. The events are committed and the worker
 * runs as in service: the application role, under row-level security.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import type { Knex } from 'knex';
import { createLogger } from '../common/logger';
import { generateWebhookSecret, webhookSecretBox } from '../domain/webhooks/secret';
import { signWebhook, verifyWebhook } from '../domain/webhooks/signature';
import { deliveryPolicy, WEBHOOK_USER_AGENT } from '../domain/webhooks/policy';
import { transact } from '../db/transaction';
import { createWorker, ensureOutboxDispatcher } from '../worker/worker';
import { installTemporalRuntime } from '../worker/runtime';
import { COMPANY_ID } from '../workflows/shared';
import { runMain, startBenchRun, type BenchRun } from './lib';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);
const RECEIVERS = Number(process.env.BENCH_RECEIVERS ?? 2);
const RATE = Number(process.env.BENCH_RATE ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
/** `shared`: the project's Temporal (TEMPORAL_ADDRESS); `own`: a fresh in-memory dev server for this run */
const TEMPORAL = process.env.BENCH_TEMPORAL === 'own' ? 'own' : 'shared';

interface Receiver {
  url: string;
  secret: string;
  /** event id → receipt time (ms, performance clock) of the first receipt */
  seen: Map<string, number>;
  duplicates: number;
  badSignatures: number;
  server: http.Server;
}

async function startReceiver(): Promise<Receiver> {
  const receiver = { seen: new Map(), duplicates: 0, badSignatures: 0 } as unknown as Receiver;
  receiver.server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = performance.now();
      const body = Buffer.concat(chunks);
      if (!verifyWebhook(receiver.secret, req.headers, body).ok) receiver.badSignatures++;
      const id = String(req.headers['webhook-id']);
      if (receiver.seen.has(id)) receiver.duplicates++;
      else receiver.seen.set(id, now);
      res.writeHead(200).end();
    });
  });
  receiver.server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook`;
  return receiver;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Commits `n` events in one transaction acting for the company, as the API's changes and their events would
 * be (`knex`: the application role's); records id → commit time.
 */
async function emitEvents(knex: Knex, companyId: string, commits: Map<string, number>, n = 1): Promise<void> {
  const ids = await transact(
    knex,
    async ({ emit }) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) {
        out.push(
          await emit({
            companyId,
            type: 'file.uploaded',
            data: { fileId: randomUUID(), datasetId: randomUUID(), version: 1 },
          }),
        );
      }
      return out;
    },
    { acting: { companyId } },
  );
  const now = performance.now();
  for (const id of ids) commits.set(id, now);
}

function deliveredCount(receivers: Receiver[], ids: Iterable<string>): number {
  let n = 0;
  for (const id of ids) for (const r of receivers) if (r.seen.has(id)) n++;
  return n;
}

function latencies(receivers: Receiver[], commits: Map<string, number>): number[] {
  const out: number[] = [];
  for (const [id, committed] of commits) for (const r of receivers) out.push(r.seen.get(id)! - committed);
  return out.sort((a, b) => a - b);
}

async function plainLoop(receivers: Receiver[], eventIds: string[]): Promise<number> {
  const agent = new http.Agent({ keepAlive: true });
  const post = (url: string, secret: string, id: string) =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({
        id,
        type: 'file.uploaded',
        createdAt: new Date().toISOString(),
        companyId: 'bench',
        schemaVersion: 1,
        data: { fileId: id },
      });
      const ts = Math.floor(Date.now() / 1000);
      const req = http.request(url, {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': WEBHOOK_USER_AGENT,
          'webhook-id': id,
          'webhook-timestamp': String(ts),
          'webhook-signature': signWebhook(secret, ts, body),
        },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  const started = performance.now();
  for (const id of eventIds) for (const r of receivers) await post(r.url, r.secret, `plain-${id}`);
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return (eventIds.length * receivers.length) / seconds;
}

async function main(): Promise<void> {
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn', 'bench');
  installTemporalRuntime(logger); // before anything creates the SDK runtime
  let ownServer: TestWorkflowEnvironment | undefined;
  if (TEMPORAL === 'own') {
    ownServer = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: {
          type: 'existing-path',
          path: process.env.TEMPORAL_CLI_PATH ?? path.resolve(__dirname, '../../.local/bin/temporal'),
        },
        searchAttributes: [COMPANY_ID],
        ip: '127.0.0.1',
      },
    });
  }
  let benchRun: BenchRun;
  try {
    benchRun = await startBenchRun({
      ...(ownServer ? { TEMPORAL_ADDRESS: ownServer.address } : {}),
      // the worker's and the writers' connections (the application role's)
      DATABASE_POOL_MAX: process.env.DATABASE_POOL_MAX ?? '30',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOW_HTTP: 'true',
    });
  } catch (err) {
    await ownServer?.teardown();
    throw err;
  }
  const { config, knex, appKnex } = benchRun;
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const receivers: Receiver[] = [];
  let dispatcherId: string | undefined;
  let running: Promise<void> | undefined;
  let worker: Awaited<ReturnType<typeof createWorker>> | undefined;
  try {
    const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../workflows'),
      logger: quiet,
    });
    worker = await createWorker({ config, knex: appKnex, logger, connection, workflowBundle });
    running = worker.run();
    dispatcherId = await ensureOutboxDispatcher(client, config);

    const companyId = randomUUID();
    await knex('companies').insert({ id: companyId, name: 'Bench', status: 'active', plan: 'premium' });
    const box = webhookSecretBox(config.secretKey);
    for (let i = 0; i < RECEIVERS; i++) {
      const r = await startReceiver();
      r.secret = generateWebhookSecret();
      const id = randomUUID();
      await knex('webhookEndpoints').insert({
        id,
        companyId,
        name: `bench ${i}`,
        url: r.url,
        events: ['file.uploaded'],
        secretEncrypted: box.seal(id, r.secret),
      });
      receivers.push(r);
    }

    console.log(
      `webhook fan-out benchmark: ${RECEIVERS} receivers, Temporal ${TEMPORAL === 'own' ? 'own in-memory dev server' : config.temporal.address}, task queue ${config.temporal.taskQueue}`,
    );
    // warm-up: workflow bundle loaded, connections and caches warm
    const warm = new Map<string, number>();
    for (let i = 0; i < 20; i++) await emitEvents(appKnex, companyId, warm);
    await waitFor(() => deliveredCount(receivers, warm.keys()) === 20 * RECEIVERS, 120_000, 'warm-up');

    // 1. sustained throughput: a burst of EVENTS events, committed 100 to a transaction by 4 writers, so
    // that the pipeline, not the writers, sets the pace
    const burst = new Map<string, number>();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      [0, 1, 2, 3].map(async () => {
        while (next < EVENTS) {
          const n = Math.min(100, EVENTS - next);
          next += n;
          await emitEvents(appKnex, companyId, burst, n);
        }
      }),
    );
    const committedIn = (performance.now() - started) / 1000;
    await waitFor(
      () => deliveredCount(receivers, burst.keys()) === EVENTS * RECEIVERS,
      600_000,
      'burst deliveries',
    );
    let lastReceipt = 0;
    for (const id of burst.keys())
      for (const r of receivers) lastReceipt = Math.max(lastReceipt, r.seen.get(id)!);
    const burstSeconds = (lastReceipt - started) / 1000;
    const throughput = (EVENTS * RECEIVERS) / burstSeconds;
    const burstLat = latencies(receivers, burst);

    // 2. latency at an offered rate: RATE events per second for SECONDS seconds
    const paced = new Map<string, number>();
    const total = RATE * SECONDS;
    const pacedStart = performance.now();
    const inFlight: Array<Promise<void>> = [];
    for (let i = 0; i < total; i++) {
      const due = pacedStart + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inFlight.push(emitEvents(appKnex, companyId, paced));
    }
    await Promise.all(inFlight);
    const offeredRate = total / ((performance.now() - pacedStart) / 1000);
    await waitFor(
      () => deliveredCount(receivers, paced.keys()) === total * RECEIVERS,
      600_000,
      'paced deliveries',
    );
    const pacedLat = latencies(receivers, paced);

    // 3. the same deliveries by a plain loop of signed POSTs
    const plain = await plainLoop(receivers, [...burst.keys()]);

    // 4. the design this replaced, for comparison: one workflow per delivery from the start, here with
    // activities that do nothing, i.e. what this Temporal server allows that design at all
    const ceilingCount = Math.min(EVENTS * RECEIVERS, 400);
    const ceilingQueue = `${config.temporal.taskQueue}-ceiling`;
    const ceilingWorker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: ceilingQueue,
      workflowBundle,
      activities: {
        attemptWebhookDelivery: async () => ({ attempt: 1, responseStatus: 200 }),
        completeWebhookDelivery: async () => ({ attempts: 1, responseStatus: 200 }),
      },
    });
    const ceiling = await ceilingWorker.runUntil(async () => {
      const policy = deliveryPolicy(config.webhooks);
      const t0 = performance.now();
      let k = 0;
      const results: Array<Promise<unknown>> = [];
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (k < ceilingCount) {
            const id = `ceiling-${benchRun.runId}-${k++}`;
            const handle = await client.workflow.start('webhookDeliveryWorkflow', {
              taskQueue: ceilingQueue,
              workflowId: id,
              args: [{ deliveryId: id, policy }],
            });
            results.push(handle.result());
          }
        }),
      );
      await Promise.all(results);
      return ceilingCount / ((performance.now() - t0) / 1000);
    });

    const duplicates = receivers.reduce((n, r) => n + r.duplicates, 0);
    const bad = receivers.reduce((n, r) => n + r.badSignatures, 0);
    const ms = (v: number) => `${Math.round(v)} ms`;
    console.log('');
    console.log(
      `burst: ${EVENTS} events committed in ${committedIn.toFixed(1)} s → ${EVENTS * RECEIVERS} deliveries`,
    );
    console.log(`  pipeline (outbox → Temporal → HTTP): ${throughput.toFixed(1)} deliveries/s sustained`);
    console.log(
      `  commit-to-receipt under the burst: p50 ${ms(percentile(burstLat, 50))}, p99 ${ms(percentile(burstLat, 99))}`,
    );
    console.log(
      `paced: ${total} events at ${offeredRate.toFixed(1)} events/s offered → ${total * RECEIVERS} deliveries`,
    );
    console.log(
      `  commit-to-receipt: p50 ${ms(percentile(pacedLat, 50))}, p99 ${ms(percentile(pacedLat, 99))}, max ${ms(pacedLat[pacedLat.length - 1])}`,
    );
    console.log(
      `plain loop of signed POSTs (same ${EVENTS * RECEIVERS} deliveries): ${plain.toFixed(1)} deliveries/s`,
    );
    console.log(`ratio pipeline / plain loop: ${(throughput / plain).toFixed(3)}`);
    console.log(
      `one workflow per delivery (webhookDeliveryWorkflow, activities that do nothing, ${ceilingCount} workflows): ` +
        `${ceiling.toFixed(1)} deliveries/s at most → the batched pipeline does ${(throughput / ceiling).toFixed(1)}× that`,
    );
    console.log(`duplicates received: ${duplicates}; signatures that did not verify: ${bad}`);
    console.log(
      `targets: ≥100 deliveries/s sustained: ${throughput >= 100 ? 'met' : 'NOT met'}; ` +
        `p99 < 2 s at ${RATE} events/s: ${percentile(pacedLat, 99) < 2000 ? 'met' : 'NOT met'}`,
    );
  } finally {
    if (dispatcherId)
      await client.workflow
        .getHandle(dispatcherId)
        .terminate('bench done')
        .catch(() => undefined);
    if (worker) {
      worker.shutdown();
      await running?.catch(() => undefined);
    }
    for (const r of receivers) {
      r.server.closeAllConnections();
      r.server.close();
    }
    await connection.close();
    await ownServer?.teardown();
    await benchRun.close();
  }
}

runMain(main);
