/**
 * Webhooks of a suspended company (README "Billing"): deliveries already handed to a workflow — retries in
 * progress, a batch's first attempts — send nothing while the company is suspended and go on, their attempts
 * intact, once it is reactivated; the reactivation's wake ends their wait at once. Real worker, Temporal and
 * HTTP receivers on loopback (test-only settings).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Worker } from '@temporalio/worker';
import type { Config } from '../../common/config';
import { transact } from '../../db/transaction';
import type { CompanyStatus } from '../../db/models';
import { setCompanyStatus } from '../../domain/billing/companyStatus';
import {
  batchWorkflowIdOf,
  startDeliveryBatches,
  startDeliveryWorkflows,
} from '../../domain/webhooks/starts';
import { runningWebhookWorkflowsQuery, wakeHeldDeliveries } from '../../domain/webhooks/wake';
import { deliveryWorkflowId } from '../../workflows/definitions/webhooks';
import { testEnv, workflowBundle } from '../helpers/env';
import { eventually } from '../helpers/temporal';
import {
  deliveriesOf,
  deliveriesSettled,
  finishedDeliveries,
  insertDelivery,
  insertEndpoint,
  newCompany,
  startReceiver,
  startWebhookWorker,
  stopOtherDispatchers,
  webhookTestConfig,
  type RunningWorker,
} from '../helpers/webhooks';

async function setStatus(companyId: string, status: CompanyStatus): Promise<void> {
  await testEnv().knex.transaction((trx) => setCompanyStatus(trx, { companyId, status, reason: 'test' }));
}

/** How many times the workflow scheduled `activity` (an attempt held by a suspension schedules it again). */
async function scheduled(workflowId: string, activity: string): Promise<number> {
  const history = await testEnv().temporal.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).filter(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity,
  ).length;
}

/** How many timers the workflow started (a first retry delay, and a wait per hold), and the last one's length. */
async function timers(workflowId: string): Promise<{ count: number; lastMs: number }> {
  const history = await testEnv().temporal.workflow.getHandle(workflowId).fetchHistory();
  const started = (history.events ?? []).flatMap((e) =>
    e.timerStartedEventAttributes ? [e.timerStartedEventAttributes] : [],
  );
  const last = started.at(-1)?.startToFireTimeout;
  const lastMs = last ? Number(String(last.seconds ?? 0)) * 1000 + Math.round((last.nanos ?? 0) / 1e6) : 0;
  return { count: started.length, lastMs };
}

describe('webhooks of a suspended company', function () {
  this.timeout(120_000);
  let running: RunningWorker;

  before(async () => {
    await stopOtherDispatchers();
    // first retry delay 200 ms, doubling: so is the wait between checks of a held delivery
    running = await startWebhookWorker(webhookTestConfig('suspension', { WEBHOOK_RETRY_INITIAL_MS: '200' }));
  });
  after(async () => {
    await running.stop();
  });

  it('a delivery retrying when the company is suspended sends nothing until reactivation, then resumes its attempts', async () => {
    const company = await newCompany();
    let suspendedAt = 0;
    let reactivatedAt = 0;
    // 500 to attempts 1–3, 200 to the 4th; suspended while it answers the 2nd
    const receiver = await startReceiver(async (n) => {
      if (n === 2) {
        await setStatus(company.id, 'suspended');
        suspendedAt = Date.now();
      }
      return n <= 3 ? 500 : 200;
    });
    const { endpoint, secret } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    receiver.secrets = [secret];
    await transact(testEnv().knex, ({ emit }) =>
      emit({ companyId: company.id, type: 'file.uploaded', data: { fileId: randomUUID(), version: 1 } }),
    );

    const delivery = await eventually(
      async () => {
        const [row] = await deliveriesOf(endpoint.id);
        return row && suspendedAt > 0 && row.attempts === 2 ? row : undefined;
      },
      { what: 'the second attempt, answered after the suspension' },
    );
    const workflowId = deliveryWorkflowId(delivery.id);
    // held more times than it has attempts left (3): the attempt activity is scheduled again after each hold
    // (a request sent meanwhile ends the wait, and fails the test below)
    await eventually(
      async () =>
        receiver.requests.length > 2 || (await scheduled(workflowId, 'attemptWebhookDelivery')) >= 5,
      { timeoutMs: 30_000, what: 'four holds (or a request)' },
    );
    expect(receiver.requests).to.have.lengthOf(2);
    const [meanwhile] = await deliveriesOf(endpoint.id);
    expect(meanwhile).to.include({ status: 'retrying', attempts: 2, completedAt: null });

    await setStatus(company.id, 'active');
    reactivatedAt = Date.now();
    const [done] = await finishedDeliveries(endpoint.id, 1);
    expect(done).to.include({ status: 'succeeded', attempts: 4, responseStatus: 200 });
    await deliveriesSettled([done]);
    expect(receiver.requests).to.have.lengthOf(4);
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).to.equal(1);
    expect(receiver.requests.every((r) => r.verifiedWith === 0)).to.equal(true);
    // nothing reached the receiver between the suspension and the reactivation
    expect(
      receiver.requests.filter((r) => r.receivedAt > suspendedAt && r.receivedAt < reactivatedAt),
    ).to.deep.equal([]);
    expect(await testEnv().temporal.workflow.getHandle(workflowId).result()).to.deep.equal({
      status: 'succeeded',
      attempts: 4,
      responseStatus: 200,
    });
  });

  it('a batch whose company is suspended before its first attempts holds them until reactivation', async () => {
    const company = await newCompany();
    const receiver = await startReceiver();
    const { endpoint, secret } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    receiver.secrets = [secret];
    // a delivery handed to its batch after the suspension (its event was dispatched just before)
    await setStatus(company.id, 'suspended');
    const deliveryId = await insertDelivery(company.id, endpoint.id, 'pending');
    const { errors } = await startDeliveryBatches(testEnv().temporal, testEnv().knex, running.config, [
      { id: deliveryId, companyId: company.id },
    ]);
    expect(errors).to.deep.equal([]);
    const workflowId = batchWorkflowIdOf([deliveryId]);
    await eventually(
      async () => receiver.requests.length > 0 || (await scheduled(workflowId, 'deliverFirstAttempts')) >= 3,
      { timeoutMs: 30_000, what: 'two holds (or a request)' },
    );
    expect(receiver.requests.map((r) => r.receivedAt)).to.deep.equal([]);
    const [meanwhile] = await deliveriesOf(endpoint.id);
    expect(meanwhile).to.include({ status: 'pending', attempts: 0, completedAt: null });

    await setStatus(company.id, 'active');
    expect(await testEnv().temporal.workflow.getHandle(workflowId).result()).to.deep.equal({
      deliveries: 1,
      succeeded: 1,
      failed: 0,
      cancelled: 0,
      retrying: [],
      outcomes: [{ deliveryId, status: 'succeeded', responseStatus: 200 }],
    });
    const [done] = await finishedDeliveries(endpoint.id, 1);
    expect(done).to.include({ status: 'succeeded', attempts: 1, responseStatus: 200 });
    expect(receiver.requests).to.have.lengthOf(1);
    expect(receiver.requests[0].verifiedWith).to.equal(0);
  });
});

describe('held webhook deliveries woken at reactivation', function () {
  this.timeout(120_000);
  /** a wait's timer is 10 minutes here: whatever goes out within WAKE_WINDOW_MS was woken */
  const LONG_HOLD_MS = 10 * 60_000;
  const WAKE_WINDOW_MS = 5_000;
  let running: RunningWorker;
  /** the worker's settings with 10-minute holds, for the workflows the tests start themselves */
  let longHold: Config;

  before(async () => {
    // no dispatcher: the tests start their workflows. A batch hands a failed first attempt over with the
    // worker's own settings: its first retry delay and first hold are 2.5 s, the next holds 5 s, then 10 s
    running = await startWebhookWorker(webhookTestConfig('wake', { WEBHOOK_RETRY_INITIAL_MS: '2500' }), {
      dispatcher: false,
    });
    longHold = webhookTestConfig('wake', { WEBHOOK_RETRY_INITIAL_MS: String(LONG_HOLD_MS) });
  });
  after(async () => {
    // a test that failed may leave a workflow in a 10-minute wait: end it with the worker
    const query = `TaskQueue = '${running.config.temporal.taskQueue}' AND ExecutionStatus = 'Running'`;
    for await (const wf of testEnv().temporal.workflow.list({ query })) {
      await testEnv()
        .temporal.workflow.getHandle(wf.workflowId, wf.runId)
        .terminate('test done')
        .catch(() => undefined);
    }
    await running.stop();
  });

  /** Waits until the workflow exists and has started `count` timers (it waits in its hold), at most 30 s. */
  async function holding(workflowId: string, count: number) {
    return eventually(
      async () => {
        const t = await timers(workflowId).catch((err: Error) => {
          if (err.name === 'WorkflowNotFoundError' || /not found/i.test(err.message)) return undefined;
          throw err;
        });
        return t && t.count >= count ? t : undefined;
      },
      { timeoutMs: 30_000, what: `${workflowId} waiting in timer ${count}` },
    );
  }

  /** The company's running webhook workflows as the wake lists them (visibility), once `workflowId` is there. */
  async function listed(companyId: string, workflowId: string): Promise<string[]> {
    return eventually(
      async () => {
        const ids: string[] = [];
        const query = runningWebhookWorkflowsQuery(companyId);
        for await (const wf of testEnv().temporal.workflow.list({ query })) ids.push(wf.workflowId);
        return ids.includes(workflowId) ? ids.sort() : undefined;
      },
      { timeoutMs: 10_000, what: `${workflowId} listed as running for its company` },
    );
  }

  /** Reactivates the company as `company:reactivate` does (commit, then wake); when the wake was sent. */
  async function reactivateAndWake(companyId: string, expectSignalled: number): Promise<number> {
    await setStatus(companyId, 'active');
    const wokenAt = Date.now();
    const woken = await wakeHeldDeliveries(testEnv().temporal, companyId);
    expect(woken).to.deep.equal({ signalled: expectSignalled, finished: 0, capped: false, errors: [] });
    return wokenAt;
  }

  /** A finished workflow's history, a wait ended by the signal in it, replays with the workflow code. */
  async function replays(workflowId: string): Promise<void> {
    const history = await testEnv().temporal.workflow.getHandle(workflowId).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, workflowId);
  }

  it('a held batch goes out within seconds of the wake, not at the end of its 10-minute wait', async () => {
    const company = await newCompany();
    const receiver = await startReceiver();
    const { endpoint, secret } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    receiver.secrets = [secret];
    await setStatus(company.id, 'suspended');
    const deliveryId = await insertDelivery(company.id, endpoint.id, 'pending');
    const { errors } = await startDeliveryBatches(testEnv().temporal, testEnv().knex, longHold, [
      { id: deliveryId, companyId: company.id },
    ]);
    expect(errors).to.deep.equal([]);
    const workflowId = batchWorkflowIdOf([deliveryId]);
    expect(await holding(workflowId, 1)).to.deep.equal({ count: 1, lastMs: LONG_HOLD_MS });
    expect(await listed(company.id, workflowId)).to.deep.equal([workflowId]);
    expect(receiver.requests).to.deep.equal([]);

    const wokenAt = await reactivateAndWake(company.id, 1);
    const [done] = await finishedDeliveries(endpoint.id, 1, WAKE_WINDOW_MS);
    expect(done).to.include({ status: 'succeeded', attempts: 1, responseStatus: 200 });
    expect(receiver.requests).to.have.lengthOf(1);
    expect(receiver.requests[0].receivedAt - wokenAt).to.be.below(WAKE_WINDOW_MS);
    expect(await testEnv().temporal.workflow.getHandle(workflowId).result()).to.deep.include({
      deliveries: 1,
      succeeded: 1,
      outcomes: [{ deliveryId, status: 'succeeded', responseStatus: 200 }],
    });
    await replays(workflowId);
  });

  it('a held retrying delivery goes on with its next attempt within seconds of the wake', async () => {
    const company = await newCompany();
    // the first attempt (the batch's) answers 500 and the company is suspended meanwhile; then 200
    const receiver = await startReceiver(async (n) => {
      if (n === 1) await setStatus(company.id, 'suspended');
      return n === 1 ? 500 : 200;
    });
    const { endpoint, secret } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    receiver.secrets = [secret];
    const deliveryId = await insertDelivery(company.id, endpoint.id, 'pending');
    const { errors } = await startDeliveryBatches(testEnv().temporal, testEnv().knex, running.config, [
      { id: deliveryId, companyId: company.id },
    ]);
    expect(errors).to.deep.equal([]);
    const workflowId = deliveryWorkflowId(deliveryId);
    // its first retry delay (2.5 s), held twice (2.5 s, 5 s), held again: now a 10 s wait
    expect(await holding(workflowId, 4)).to.deep.equal({ count: 4, lastMs: 10_000 });
    expect(await listed(company.id, workflowId)).to.deep.equal([workflowId]);
    expect(receiver.requests).to.have.lengthOf(1);
    const [meanwhile] = await deliveriesOf(endpoint.id);
    expect(meanwhile).to.include({ status: 'retrying', attempts: 1, completedAt: null });

    const wokenAt = await reactivateAndWake(company.id, 1);
    const [done] = await finishedDeliveries(endpoint.id, 1, WAKE_WINDOW_MS);
    expect(done).to.include({ status: 'succeeded', attempts: 2, responseStatus: 200 });
    expect(receiver.requests).to.have.lengthOf(2);
    expect(receiver.requests[1].receivedAt - wokenAt).to.be.below(WAKE_WINDOW_MS);
    expect(await testEnv().temporal.workflow.getHandle(workflowId).result()).to.deep.equal({
      status: 'succeeded',
      attempts: 2,
      responseStatus: 200,
    });
    await replays(workflowId);
  });

  it('a wake while the company is still suspended sends nothing: the delivery checks again and stays held', async () => {
    const company = await newCompany();
    const receiver = await startReceiver();
    const { endpoint, secret } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    receiver.secrets = [secret];
    await setStatus(company.id, 'suspended');
    // a redelivery's own workflow (all 5 attempts there), started with 10-minute holds
    const deliveryId = await insertDelivery(company.id, endpoint.id, 'pending');
    const { errors } = await startDeliveryWorkflows(testEnv().temporal, testEnv().knex, longHold, [
      { id: deliveryId, companyId: company.id },
    ]);
    expect(errors).to.deep.equal([]);
    const workflowId = deliveryWorkflowId(deliveryId);
    await holding(workflowId, 1);
    await listed(company.id, workflowId);

    // still suspended: the wake ends the wait, the check finds the company suspended, the workflow waits again
    const woken = await wakeHeldDeliveries(testEnv().temporal, company.id);
    expect(woken).to.deep.equal({ signalled: 1, finished: 0, capped: false, errors: [] });
    expect(await holding(workflowId, 2)).to.deep.equal({ count: 2, lastMs: 2 * LONG_HOLD_MS });
    expect(await scheduled(workflowId, 'attemptWebhookDelivery')).to.equal(2);
    expect(receiver.requests).to.deep.equal([]);
    const [meanwhile] = await deliveriesOf(endpoint.id);
    expect(meanwhile).to.include({ status: 'pending', attempts: 0, completedAt: null });
    expect((await testEnv().temporal.workflow.getHandle(workflowId).describe()).status.name).to.equal(
      'RUNNING',
    );

    // then reactivated: it goes out at once, its first attempt
    const wokenAt = await reactivateAndWake(company.id, 1);
    const [done] = await finishedDeliveries(endpoint.id, 1, WAKE_WINDOW_MS);
    expect(done).to.include({ status: 'succeeded', attempts: 1, responseStatus: 200 });
    expect(receiver.requests).to.have.lengthOf(1);
    expect(receiver.requests[0].receivedAt - wokenAt).to.be.below(WAKE_WINDOW_MS);
    expect(await testEnv().temporal.workflow.getHandle(workflowId).result()).to.deep.equal({
      status: 'succeeded',
      attempts: 1,
      responseStatus: 200,
    });
    await replays(workflowId);
  });
});
