/**
 * Webhook test tools: real HTTP receivers on loopback that verify what they get with the project's own
 * `verifyWebhook`, a worker with the test-only settings (loopback targets, plain http, short delays) on
 * its own task queue, and direct ways to make companies and endpoints.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Worker } from '@temporalio/worker';
import { loadConfig, type Config } from '../../common/config';
import { generateWebhookSecret, webhookSecretBox } from '../../domain/webhooks/secret';
import { verifyWebhook } from '../../domain/webhooks/signature';
import { WebhookDelivery, WebhookEndpoint } from '../../db/models';
import type { PlanName } from '../../domain/plans/plans';
import { ensureOutboxDispatcher } from '../../worker/worker';
import type { Resolver } from '../../domain/webhooks/targets';
import { createApp } from '../../api/app';
import { atEnd, startWorker, testEnv, workflowBundle } from './env';
import { createCompany, createTeam, type TestCompany } from './factories';
import { eventually } from './temporal';
import { deliveryWorkflowId } from '../../workflows/definitions/webhooks';

export interface ReceivedRequest {
  n: number;
  method: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: any;
  receivedAt: number;
  /** which of the receiver's secrets verified the signature (index), or -1 */
  verifiedWith: number;
}

/** What the receiver does with its n-th request (1-based): a status, 'hang' (never answer), or a promise of one. */
export type Behaviour = (n: number, req: ReceivedRequest) => number | 'hang' | Promise<number | 'hang'>;

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** secrets tried in order by verifyWebhook; tests set them once the endpoint exists */
  secrets: string[];
  behaviour: Behaviour;
  /** requests not answered yet (a 'hang' stays open until the sender gives up), and the most at once */
  open: number;
  maxOpen: number;
  close(): Promise<void>;
}

export async function startReceiver(behaviour: Behaviour = () => 200, path = '/hook'): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    requests: [],
    secrets: [],
    behaviour,
    open: 0,
    maxOpen: 0,
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    receiver.open += 1;
    receiver.maxOpen = Math.max(receiver.maxOpen, receiver.open);
    res.once('close', () => (receiver.open -= 1));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const record: ReceivedRequest = {
        n: receiver.requests.length + 1,
        method: req.method ?? '',
        headers: req.headers,
        rawBody,
        body,
        receivedAt: Date.now(),
        verifiedWith: receiver.secrets.findIndex((s) => verifyWebhook(s, req.headers, rawBody).ok),
      };
      receiver.requests.push(record);
      void Promise.resolve(receiver.behaviour(record.n, record)).then((answer) => {
        if (answer === 'hang') return; // never answers; closed with the server
        res.writeHead(answer, { 'content-type': 'text/plain' });
        res.end(String(answer));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  receiver.url = `http://127.0.0.1:${port}${path}`;
  let closed = false;
  receiver.close = async () => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  atEnd(() => receiver.close());
  return receiver;
}

/** Environment for the webhook tests: the run's database, its own task queue, the test-only settings. */
export function webhookTestEnvVars(queueSuffix: string, overrides: Record<string, string> = {}) {
  const base = testEnv().config;
  return {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL: base.databaseUrl,
    S3_PREFIX: base.s3.prefix,
    TEMPORAL_TASK_QUEUE: `${base.temporal.taskQueue}-${queueSuffix}`,
    REPORT_WORK_DIR: base.reports.workDir,
    OUTBOX_IDLE_WAIT_MS: '1000',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_RETRY_INITIAL_MS: '100',
    WEBHOOK_RETRY_BACKOFF_COEFFICIENT: '2',
    WEBHOOK_ATTEMPT_TIMEOUT_MS: '1000',
    ...overrides,
  };
}

export function webhookTestConfig(queueSuffix: string, overrides: Record<string, string> = {}): Config {
  return loadConfig(webhookTestEnvVars(queueSuffix, overrides));
}

/** Starts test/helpers/webhookWorkerProcess in a child process; resolves once it polls. */
export async function spawnWorkerProcess(env: Record<string, string | undefined>): Promise<ChildProcess> {
  const bundle = await workflowBundle();
  const codePath = path.join(os.tmpdir(), `webhook-test-bundle-${testEnv().runId}.js`);
  await fs.writeFile(codePath, bundle.code);
  atEnd(() => fs.rm(codePath, { force: true }));
  const child = spawn(process.execPath, [path.join(__dirname, 'webhookWorkerProcess.js')], {
    env: { ...env, WORKFLOW_BUNDLE_PATH: codePath },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  atEnd(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`worker process not ready after 60 s: ${stderr}`)),
      60_000,
    );
    child.stdout.on('data', (c: Buffer) => {
      if (c.toString().includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker process exited (${code}): ${stderr}`));
    });
  });
  return child;
}

export interface RunningWorker {
  worker: Worker;
  config: Config;
  stop(): Promise<void>;
}

/** A real worker (default activities: webhook fan-out included) on the config's task queue. */
export async function startWebhookWorker(
  config: Config,
  options: { dispatcher?: boolean; webhookResolver?: Resolver } = {},
): Promise<RunningWorker> {
  const { temporal } = testEnv();
  const started = await startWorker({ config, webhookResolver: options.webhookResolver });
  let dispatcherId: string | undefined;
  if (options.dispatcher !== false) dispatcherId = await ensureOutboxDispatcher(temporal, config);
  const stop = async () => {
    // the dispatcher first, so its activity does not keep the worker draining
    if (dispatcherId) {
      const id = dispatcherId;
      dispatcherId = undefined;
      await temporal.workflow
        .getHandle(id)
        .terminate('test done')
        .catch(() => undefined);
    }
    await started.stop();
  };
  atEnd(stop);
  return { worker: started.worker, config, stop };
}

/**
 * Only one outbox dispatcher may run against the run's database while these tests do: a dispatcher of
 * another task queue would claim their events. Stops the run's default one if a test left it running,
 * then waits out the idle wait of a dispatcher activity still in flight (a terminated workflow's last
 * activity runs on, and may claim one more batch when an event's NOTIFY wakes it).
 */
export async function stopOtherDispatchers(): Promise<void> {
  const { temporal, config } = testEnv();
  await temporal.workflow
    .getHandle(`outbox-dispatcher:${config.temporal.taskQueue}`)
    .terminate('webhook tests need the only dispatcher')
    .catch(() => undefined);
  await sleep(config.outbox.idleWaitMs + 1_000);
}

/** A company for webhook tests: Premium by default (no endpoint limit). */
export function newCompany(plan: PlanName | null = 'premium', name = 'Webhook Co'): Promise<TestCompany> {
  return createCompany({ plan, name });
}

/** An endpoint written straight to the database (the API path is tested on its own). */
export async function insertEndpoint(
  config: Config,
  companyId: string,
  fields: { url: string; events?: string[]; name?: string; active?: boolean },
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const id = randomUUID();
  const secret = generateWebhookSecret();
  const endpoint = await WebhookEndpoint.scoped(companyId, testEnv().knex).insertAndFetch({
    id,
    name: fields.name ?? 'receiver',
    url: fields.url,
    events: fields.events ?? ['file.uploaded'],
    active: fields.active ?? true,
    secretEncrypted: webhookSecretBox(config.secretKey).seal(id, secret),
    consecutiveFailures: 0,
  });
  return { endpoint, secret };
}

export async function deliveriesOf(endpointId: string): Promise<WebhookDelivery[]> {
  return WebhookDelivery.query(testEnv().knex).where({ endpointId }).orderBy('createdAt');
}

/** Waits until the endpoint has `count` deliveries and all are finished; returns them. */
export async function finishedDeliveries(
  endpointId: string,
  count: number,
  timeoutMs = 45_000,
): Promise<WebhookDelivery[]> {
  let last: WebhookDelivery[] = [];
  try {
    return await eventually(
      async () => {
        last = await deliveriesOf(endpointId);
        return last.length === count && last.every((r) => r.completedAt) ? last : undefined;
      },
      { timeoutMs, what: `${count} finished deliveries` },
    );
  } catch (err) {
    const state = last.map(
      (d) => `${d.status}/${d.attempts}/${d.workflowStartedAt ? 'started' : 'not started'}`,
    );
    throw new Error(`${(err as Error).message}; deliveries: [${state.join(', ')}]`);
  }
}

/**
 * Waits until nothing more can be sent for these deliveries (instead of sleeping to "see that nothing
 * more arrives"): every workflow that may attempt one — its batch (`ownerWorkflowId`) and its own delivery
 * workflow — has closed or never existed. An attempt is over before its workflow closes, so a receiver has
 * recorded every request by then.
 */
export async function deliveriesSettled(
  deliveries: Array<Pick<WebhookDelivery, 'id' | 'ownerWorkflowId'>>,
  timeoutMs = 45_000,
): Promise<void> {
  const { temporal } = testEnv();
  const ids = new Set<string>();
  for (const d of deliveries) {
    ids.add(deliveryWorkflowId(d.id));
    if (d.ownerWorkflowId) ids.add(d.ownerWorkflowId);
  }
  for (const id of ids) {
    await eventually(
      async () => {
        try {
          const { status } = await temporal.workflow.getHandle(id).describe();
          return status.name !== 'RUNNING';
        } catch (err) {
          if ((err as Error).name === 'WorkflowNotFoundError') return true;
          throw err;
        }
      },
      { timeoutMs, what: `workflow ${id} closed` },
    );
  }
}

/** `deliveriesSettled` for every delivery of the endpoint; returns them. */
export async function endpointSettled(endpointId: string): Promise<WebhookDelivery[]> {
  const rows = await deliveriesOf(endpointId);
  await deliveriesSettled(rows);
  return rows;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The API with the webhook test settings (same database and services as the run), listening on loopback. */
export async function startWebhookApp(config: Config): Promise<{ baseUrl: string }> {
  const deps = { ...testEnv().deps, config };
  const server = http.createServer(createApp(deps).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  atEnd(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { baseUrl: `http://127.0.0.1:${port}` };
}

/**
 * What a test of events reaching a real receiver starts with: a worker with the outbox dispatcher and an API
 * on `webhookTestConfig(name)`, a premium team, and its endpoint subscribed to `events`, pointing at a
 * receiver on loopback that knows its secret. Stop `running` at the end.
 */
export async function startEventsReceiver(name: string, events: string[]) {
  const config = webhookTestConfig(name);
  const running = await startWebhookWorker(config);
  try {
    const { baseUrl } = await startWebhookApp(config);
    const team = await createTeam({ plan: 'premium' });
    const receiver = await startReceiver();
    const { endpoint, secret } = await insertEndpoint(config, team.company.id, { url: receiver.url, events });
    receiver.secrets = [secret];
    return { config, running, baseUrl, team, receiver, endpoint };
  } catch (err) {
    await running.stop();
    throw err;
  }
}

/**
 * A delivery to the endpoint written straight to the database; its id. `pending`: a `file.uploaded` delivery as
 * fan-out writes it (no workflow yet); `succeeded`: a finished `ping` delivery (something to redeliver).
 */
export async function insertDelivery(
  companyId: string,
  endpointId: string,
  status: 'pending' | 'succeeded',
): Promise<string> {
  const deliveryId = randomUUID();
  const event =
    status === 'pending'
      ? { eventType: 'file.uploaded', eventData: JSON.stringify({ fileId: randomUUID(), version: 1 }) }
      : { eventType: 'ping', eventData: JSON.stringify({ endpointId }) };
  await testEnv()
    .knex('webhookDeliveries')
    .insert({
      id: deliveryId,
      companyId,
      endpointId,
      eventId: randomUUID(),
      ...event,
      eventCreatedAt: new Date(),
      status,
      ...(status === 'succeeded' ? { completedAt: new Date(), workflowStartedAt: new Date() } : {}),
    });
  return deliveryId;
}
