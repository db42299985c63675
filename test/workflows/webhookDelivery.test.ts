/**
 * Webhook delivery end to end: the real outbox, the real dispatcher and delivery workflows on the local
 * Temporal server, real HTTP receivers on loopback that verify every request with `verifyWebhook`.
 * The worker runs with the test-only settings (loopback targets, plain http, 100 ms first delay doubling,
 * 1 s attempt timeout) on its own task queue.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import { transact } from '../../db/transaction';
import { OutboxEvent, WebhookDelivery, WebhookEndpoint } from '../../db/models';
import { webhookSecretBox, generateWebhookSecret } from '../../domain/webhooks/secret';
import {
  batchWorkflowIdOf,
  startDeliveryBatches,
  startDeliveryWorkflows,
} from '../../domain/webhooks/starts';
import { COMPANY_ID } from '../../workflows/shared';
import { attemptsQuery, deliveryWorkflowId } from '../../workflows/definitions/webhooks';
import { createWebhookFanOut } from '../../domain/webhooks/fanOut';
import { createDeliveryStore } from '../../domain/webhooks/store';
import type { AfterCommit } from '../../db/outbox';
import type { Config } from '../../common/config';
import { ensureWebhookRetentionSchedule } from '../../worker/worker';
import { testEnv } from '../helpers/env';
import { eventually } from '../helpers/temporal';
import {
  deliveriesOf,
  finishedDeliveries,
  type Behaviour,
  insertEndpoint,
  newCompany,
  deliveriesSettled,
  endpointSettled,
  startReceiver,
  startWebhookWorker,
  stopOtherDispatchers,
  spawnWorkerProcess,
  webhookTestConfig,
  webhookTestEnvVars,
  type RunningWorker,
} from '../helpers/webhooks';

async function emit(companyId: string, type: 'file.uploaded' | 'report.ready' = 'file.uploaded', n = 1) {
  return transact(testEnv().knex, async ({ emit: write }) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push(
        await write({
          companyId,
          type,
          data: { fileId: randomUUID(), datasetId: randomUUID(), version: i + 1 },
        }),
      );
    }
    return ids;
  });
}

async function dispatched(eventIds: string[]): Promise<boolean> {
  const rows = await OutboxEvent.query(testEnv().knex).whereIn('id', eventIds).whereNotNull('dispatchedAt');
  return rows.length === eventIds.length;
}

async function endpointRow(id: string): Promise<WebhookEndpoint> {
  return (await WebhookEndpoint.query(testEnv().knex).findById(id))!;
}

/**
 * The dispatcher's own steps, by hand: fans the events out in a claiming transaction that marks them
 * dispatched, and returns the after-commit steps (starting the batches) without running them.
 */
async function fanOutByHand(config: Config, eventIds: string[]): Promise<AfterCommit[]> {
  const { knex, temporal, logger } = testEnv();
  const events = await OutboxEvent.query(knex).whereIn('id', eventIds);
  const { fanOut } = createWebhookFanOut({ config, knex, logger, temporal });
  return knex.transaction(async (trx: Knex.Transaction) => {
    const after = await fanOut(trx, events);
    await trx('outbox').whereIn('id', eventIds).update({ dispatchedAt: trx.fn.now() });
    return after;
  });
}

/** A receiver on loopback and an endpoint of the company pointing at it, its secret known to the receiver. */
async function receivingEndpoint(
  config: Config,
  companyId: string,
  behaviour?: Behaviour,
  events?: string[],
) {
  const receiver = await startReceiver(behaviour);
  const { endpoint, secret } = await insertEndpoint(config, companyId, { url: receiver.url, events });
  receiver.secrets = [secret];
  return { receiver, endpoint };
}

describe('webhook delivery (outbox → Temporal → HTTP)', function () {
  this.timeout(120_000);
  let running: RunningWorker;

  before(async () => {
    await stopOtherDispatchers();
    running = await startWebhookWorker(webhookTestConfig('webhooks'));
  });
  after(async () => {
    await running.stop();
  });

  it('delivers on the first attempt: the envelope as raw JSON, the headers, a signature that verifies', async () => {
    const company = await newCompany();
    const receiver = await startReceiver();
    const { endpoint, secret } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    receiver.secrets = [secret];
    const [eventId] = await emit(company.id);

    const [delivery] = await finishedDeliveries(endpoint.id, 1);
    expect(delivery).to.include({ status: 'succeeded', attempts: 1, responseStatus: 200, lastError: null });
    expect(delivery.eventId).to.equal(eventId);
    expect(receiver.requests).to.have.lengthOf(1);
    const req = receiver.requests[0];
    expect(req.method).to.equal('POST');
    expect(req.verifiedWith).to.equal(0);
    expect(req.headers['webhook-id']).to.equal(eventId);
    expect(req.headers['webhook-timestamp']).to.match(/^\d{10}$/);
    expect(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000)).to.be.lessThan(30);
    expect(req.headers['webhook-signature']).to.match(/^v1=[0-9a-f]{64}$/);
    expect(req.headers['user-agent']).to.equal('Service-Webhooks/1.0');
    expect(req.headers['content-type']).to.equal('application/json');
    const outbox = (await OutboxEvent.query(testEnv().knex).findById(eventId))!;
    expect(req.body).to.deep.equal({
      id: eventId,
      type: 'file.uploaded',
      createdAt: new Date(outbox.createdAt).toISOString(),
      companyId: company.id,
      schemaVersion: 1,
      data: outbox.data,
    });
    expect(Object.keys(req.body)).to.deep.equal([
      'id',
      'type',
      'createdAt',
      'companyId',
      'schemaVersion',
      'data',
    ]);

    // operators: the first attempt ran in the company's batch, named by its first delivery, carrying the
    // company; a delivery that succeeds at once needs no workflow of its own
    const batch = testEnv().temporal.workflow.getHandle(batchWorkflowIdOf([delivery.id]));
    expect(await batch.result()).to.deep.equal({
      deliveries: 1,
      succeeded: 1,
      failed: 0,
      cancelled: 0,
      retrying: [],
      outcomes: [{ deliveryId: delivery.id, status: 'succeeded', responseStatus: 200 }],
    });
    const description = await batch.describe();
    expect(description.typedSearchAttributes.get(COMPANY_ID)).to.equal(company.id);
    expect(description.status.name).to.equal('COMPLETED');
    const own = testEnv().temporal.workflow.getHandle(deliveryWorkflowId(delivery.id));
    const missing = await own.describe().then(
      () => null,
      (err: unknown) => err,
    );
    expect(missing).to.be.instanceOf(WorkflowNotFoundError);
  });

  it('retries a 500 and succeeds on the second attempt; a success resets the failures in a row', async () => {
    const company = await newCompany();
    const receiver = await startReceiver((n) => (n === 1 ? 500 : 200));
    const { endpoint, secret } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    await WebhookEndpoint.query(testEnv().knex).findById(endpoint.id).patch({ consecutiveFailures: 7 });
    receiver.secrets = [secret];
    const [eventId] = await emit(company.id);

    const [delivery] = await finishedDeliveries(endpoint.id, 1);
    expect(delivery).to.include({ status: 'succeeded', attempts: 2, responseStatus: 200 });
    expect(delivery.lastError).to.equal('attempt 1: receiver answered 500');
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).to.deep.equal([eventId, eventId]);
    expect(receiver.requests.every((r) => r.verifiedWith === 0)).to.equal(true);
    expect(receiver.requests[0].rawBody).to.equal(receiver.requests[1].rawBody);
    expect((await endpointRow(endpoint.id)).consecutiveFailures).to.equal(0);
  });

  it('makes exactly 5 attempts against a receiver that always answers 500, with growing delays, then fails', async () => {
    const company = await newCompany();
    const receiver = await startReceiver(() => 500);
    const { endpoint, secret } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    receiver.secrets = [secret];
    await emit(company.id);

    const [delivery] = await finishedDeliveries(endpoint.id, 1);
    expect(delivery).to.include({ status: 'failed', attempts: 5, responseStatus: 500 });
    expect(delivery.lastError).to.equal('attempt 5: receiver answered 500');
    await deliveriesSettled([delivery]); // nothing more can come
    expect(receiver.requests).to.have.lengthOf(5);
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).to.equal(1);
    // delays of 100, 200, 400 and 800 ms in the test settings (this dev server fires retry timers with up
    // to about 1 s of lateness, so the gaps are only checked from below; the policy itself is in history)
    const gaps = receiver.requests.slice(1).map((r, i) => r.receivedAt - receiver.requests[i].receivedAt);
    [100, 200, 400, 800].forEach((delay, i) => expect(gaps[i]).to.be.at.least(delay * 0.9));
    expect((await endpointRow(endpoint.id)).consecutiveFailures).to.equal(1);

    // operators: the batch handed the delivery to a workflow of its own, whose history holds each failed
    // attempt (the first in its input, the next ones as signals), the first delay as a timer, the retry
    // policy for attempts 2 to 5, and the last attempt's failure
    const batch = testEnv().temporal.workflow.getHandle(batchWorkflowIdOf([delivery.id]));
    const batchResult = await batch.result();
    expect(batchResult.retrying).to.deep.equal([delivery.id]);
    expect(batchResult.outcomes).to.deep.equal([
      { deliveryId: delivery.id, status: 'retrying', responseStatus: 500 },
    ]);
    const handle = testEnv().temporal.workflow.getHandle(deliveryWorkflowId(delivery.id));
    const description = await handle.describe();
    expect(description.typedSearchAttributes.get(COMPANY_ID)).to.equal(company.id);
    const attempts = await handle.query(attemptsQuery);
    expect(attempts.map((a) => [a.attempt, a.responseStatus])).to.deep.equal([
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 500],
    ]);
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    expect(events.filter((e) => e.workflowExecutionSignaledEventAttributes)).to.have.lengthOf(3);
    const timer = events.find((e) => e.timerStartedEventAttributes)!.timerStartedEventAttributes!;
    expect(Number(timer.startToFireTimeout?.nanos)).to.equal(100_000_000);
    const started = events.find(
      (e) => e.activityTaskStartedEventAttributes && e.activityTaskStartedEventAttributes.attempt === 4,
    );
    expect(started, 'ActivityTaskStarted of attempt 5 (the 4th of this workflow)').to.exist;
    const scheduled = events.find(
      (e) => e.activityTaskScheduledEventAttributes,
    )!.activityTaskScheduledEventAttributes!;
    expect(scheduled.activityType?.name).to.equal('attemptWebhookDelivery');
    expect(scheduled.retryPolicy).to.deep.include({ backoffCoefficient: 2, maximumAttempts: 4 });
    expect(Number(scheduled.retryPolicy?.initialInterval?.nanos)).to.equal(200_000_000);
    expect(await handle.result()).to.deep.equal({ status: 'failed', attempts: 5, responseStatus: 500 });
  });

  it('stops at once on 410: one attempt, the endpoint disabled with its reason, audited, nothing more sent', async () => {
    const company = await newCompany();
    const receiver = await startReceiver(() => 410);
    const { endpoint, secret } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    receiver.secrets = [secret];
    await emit(company.id);

    const [delivery] = await finishedDeliveries(endpoint.id, 1);
    expect(delivery).to.include({ status: 'failed', attempts: 1, responseStatus: 410 });
    expect(delivery.lastError).to.equal('attempt 1: receiver answered 410 Gone; endpoint disabled');
    const disabled = await endpointRow(endpoint.id);
    expect(disabled.active).to.equal(false);
    expect(disabled.disabledReason).to.equal('receiver_gone');
    expect(disabled.disabledAt).to.be.instanceOf(Date);
    const audit = await testEnv().knex('auditLog').where({ companyId: company.id, resourceId: endpoint.id });
    expect(audit).to.have.lengthOf(1);
    expect(audit[0]).to.include({ action: 'webhook_endpoint.disabled', actorPersonId: null });
    expect(audit[0].details).to.include({ reason: 'receiver_gone', automatic: true, responseStatus: 410 });

    const later = await emit(company.id);
    await eventually(() => dispatched(later), { what: 'later event dispatched' });
    await endpointSettled(endpoint.id);
    expect(receiver.requests).to.have.lengthOf(1);
    expect(await deliveriesOf(endpoint.id)).to.have.lengthOf(1);
  });

  it('counts a receiver that hangs as a failure (attempt timeout) and retries', async () => {
    const company = await newCompany();
    const receiver = await startReceiver((n) => (n === 1 ? 'hang' : 200));
    const { endpoint, secret } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    receiver.secrets = [secret];
    await emit(company.id);

    const [delivery] = await finishedDeliveries(endpoint.id, 1);
    expect(delivery).to.include({ status: 'succeeded', attempts: 2, responseStatus: 200 });
    expect(delivery.lastError).to.equal('attempt 1: no answer within 1000 ms');
    expect(receiver.requests).to.have.lengthOf(2);
    expect(receiver.requests[1].receivedAt - receiver.requests[0].receivedAt).to.be.at.least(1000);
  });

  it('keeps a receiver that hangs from holding up another endpoint of the same company in the same batch', async () => {
    const company = await newCompany();
    const { receiver: hanging, endpoint: a } = await receivingEndpoint(
      running.config,
      company.id,
      () => 'hang',
    );
    const { endpoint: b } = await receivingEndpoint(running.config, company.id);
    // 40 events in one transaction: one dispatcher pass, one batch of 80 deliveries; more hanging
    // deliveries than the batch's 32 attempts in flight
    await emit(company.id, 'file.uploaded', 40);

    const done = await finishedDeliveries(b.id, 40);
    expect(done.every((d) => d.status === 'succeeded' && d.attempts === 1)).to.equal(true);
    // b was not held up by a: every delivery of a that has finished at all finished after the last of b
    // (a's need at least 5 rounds of 1 s timeouts), and a's endpoint never had more than 8 attempts open
    // at once. (Not "a's are all still pending": on a loaded machine the first round may be over.)
    const lastOfB = Math.max(...done.map((d) => d.completedAt!.getTime()));
    const other = await deliveriesOf(a.id);
    expect(other).to.have.lengthOf(40);
    expect(other.filter((d) => d.completedAt && d.completedAt.getTime() <= lastOfB)).to.deep.equal([]);
    expect(hanging.maxOpen).to.be.at.least(1).and.at.most(8);
    expect(new Set(done.map((d) => d.ownerWorkflowId)).size).to.equal(1);
    expect(other.every((d) => d.ownerWorkflowId === done[0].ownerWorkflowId)).to.equal(true);
    await WebhookEndpoint.query(testEnv().knex).findById(a.id).patch({ active: false });
  });

  it('hands a failed first attempt to its own workflow at once, not when the rest of its batch is done', async () => {
    const { knex } = testEnv();
    const company = await newCompany();
    const { endpoint: a } = await receivingEndpoint(running.config, company.id, () => 'hang');
    // each event: 500 the first time, 200 after
    const seen = new Set<string>();
    const { endpoint: b } = await receivingEndpoint(
      running.config,
      company.id,
      (_n, req) => {
        const id = String(req.headers['webhook-id']);
        if (seen.has(id)) return 200;
        seen.add(id);
        return 500;
      },
      ['report.ready'],
    );
    // one transaction, so one dispatcher pass and one batch: 40 deliveries that hang (5 rounds of 8 × 1 s)
    // and 5 that fail once, then succeed
    await transact(knex, async ({ emit: write }) => {
      for (let i = 0; i < 40; i++) await write({ companyId: company.id, type: 'file.uploaded', data: { i } });
      for (let i = 0; i < 5; i++) await write({ companyId: company.id, type: 'report.ready', data: { i } });
    });

    const done = await finishedDeliveries(b.id, 5);
    expect(done.every((d) => d.status === 'succeeded' && d.attempts === 2)).to.equal(true);
    expect(done.every((d) => d.ownerWorkflowId === deliveryWorkflowId(d.id))).to.equal(true);
    // the batch still owns the hanging endpoint's deliveries and is still attempting them
    const [stuck] = await deliveriesOf(a.id);
    expect(stuck.ownerWorkflowId).to.match(/^webhook-batch:/);
    const batch = testEnv().temporal.workflow.getHandle(stuck.ownerWorkflowId!);
    expect((await batch.describe()).status.name, 'the batch is still attempting').to.equal('RUNNING');
    await WebhookEndpoint.query(knex).findById(a.id).patch({ active: false });
    const result = await batch.result();
    // the same batch made their first attempts
    expect(result.retrying).to.include.members(done.map((d) => d.id));
  });

  it('disables an endpoint after 20 failed deliveries in a row (counted one by one while they run at once): audited, visible, the 21st event not sent', async () => {
    const company = await newCompany();
    const receiver = await startReceiver(() => 503);
    const { endpoint, secret } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    receiver.secrets = [secret];

    await emit(company.id, 'file.uploaded', 20);
    const all = await finishedDeliveries(endpoint.id, 20, 90_000);
    expect(all.every((d) => d.status === 'failed' && d.attempts === 5)).to.equal(true);
    const row = await endpointRow(endpoint.id);
    expect(row.active).to.equal(false);
    expect(row.disabledReason).to.equal('consecutive_failures');
    expect(row.consecutiveFailures).to.equal(20);
    const audit = await testEnv()
      .knex('auditLog')
      .where({ companyId: company.id, action: 'webhook_endpoint.disabled' });
    expect(audit).to.have.lengthOf(1);
    // disabled by the 20th failure, not before: in the same transaction that finished the delivery counted
    // 20th (now() is that transaction's start; the count is serialised by the endpoint's row lock)
    const twentieth = all.find((d) => d.id === audit[0].details.lastDeliveryId)!;
    expect(new Date(row.disabledAt!).getTime()).to.equal(new Date(twentieth.completedAt!).getTime());
    expect(audit[0]).to.include({ actorPersonId: null, resourceId: endpoint.id });
    expect(audit[0].details).to.include({
      reason: 'consecutive_failures',
      consecutiveFailures: 20,
      automatic: true,
    });
    expect(receiver.requests).to.have.lengthOf(100);

    const [twentyFirst] = await emit(company.id);
    await eventually(() => dispatched([twentyFirst]), { what: '21st event dispatched' });
    await endpointSettled(endpoint.id);
    expect(receiver.requests).to.have.lengthOf(100);
    expect(receiver.requests.some((r) => r.headers['webhook-id'] === twentyFirst)).to.equal(false);
    expect(await deliveriesOf(endpoint.id)).to.have.lengthOf(20);
  });

  it('signs later attempts with the new secret after a rotation while the delivery is retrying', async () => {
    const company = await newCompany();
    let rotate: () => void = () => undefined;
    const rotated = new Promise<void>((resolve) => (rotate = resolve));
    // the first attempt is answered 500 only once the secret has been rotated
    const receiver = await startReceiver(async (n) => (n === 1 ? rotated.then(() => 500) : 200));
    const { endpoint, secret: oldSecret } = await insertEndpoint(running.config, company.id, {
      url: receiver.url,
    });
    const newSecret = generateWebhookSecret();
    receiver.secrets = [oldSecret, newSecret];
    await emit(company.id);

    await eventually(async () => receiver.requests.length === 1, { what: 'first attempt' });
    await WebhookEndpoint.query(testEnv().knex)
      .findById(endpoint.id)
      .patch({ secretEncrypted: webhookSecretBox(running.config.secretKey).seal(endpoint.id, newSecret) });
    rotate();

    const [delivery] = await finishedDeliveries(endpoint.id, 1);
    expect(delivery).to.include({ status: 'succeeded', attempts: 2 });
    expect(receiver.requests.map((r) => r.verifiedWith)).to.deep.equal([0, 1]);
  });

  it('never sends one company’s events to another company’s endpoint, nor rolled-back events', async () => {
    const a = await newCompany('premium', 'A');
    const b = await newCompany('premium', 'B');
    const receiverA = await startReceiver();
    const receiverB = await startReceiver();
    const other = await startReceiver();
    const { endpoint: epA } = await insertEndpoint(running.config, a.id, { url: receiverA.url });
    const { endpoint: epB } = await insertEndpoint(running.config, b.id, { url: receiverB.url });
    // same company, not subscribed to the type, and a disabled one: neither receives anything
    const { endpoint: epOther } = await insertEndpoint(running.config, a.id, {
      url: other.url,
      events: ['report.ready'],
    });
    const { endpoint: epOff } = await insertEndpoint(running.config, a.id, { url: other.url, active: false });

    await transact(testEnv().knex, async ({ emit: write }) => {
      await write({ companyId: a.id, type: 'file.uploaded', data: { rolledBack: true } });
      throw new Error('rolled back');
    }).catch(() => undefined);
    const eventsA = await emit(a.id, 'file.uploaded', 3);
    const [eventB] = await emit(b.id);

    await finishedDeliveries(epA.id, 3);
    await finishedDeliveries(epB.id, 1);
    await eventually(() => dispatched([...eventsA, eventB]), { what: 'events dispatched' });
    await endpointSettled(epA.id);
    await endpointSettled(epB.id);
    expect(receiverA.requests.map((r) => r.headers['webhook-id']).sort()).to.deep.equal([...eventsA].sort());
    expect(receiverA.requests.every((r) => r.body.companyId === a.id)).to.equal(true);
    expect(receiverB.requests.map((r) => r.headers['webhook-id'])).to.deep.equal([eventB]);
    expect(receiverB.requests[0].body.companyId).to.equal(b.id);
    expect(other.requests).to.have.lengthOf(0);
    expect(await deliveriesOf(epOther.id)).to.have.lengthOf(0);
    expect(await deliveriesOf(epOff.id)).to.have.lengthOf(0);
  });

  it('delivers a ping only to the pinged endpoint, even when it does not subscribe to ping', async () => {
    const company = await newCompany();
    const pinged = await startReceiver();
    const bystander = await startReceiver();
    const { endpoint, secret } = await insertEndpoint(running.config, company.id, { url: pinged.url });
    await insertEndpoint(running.config, company.id, {
      url: bystander.url,
      events: ['ping', 'file.uploaded'],
    });
    pinged.secrets = [secret];
    const [eventId] = await transact(testEnv().knex, async ({ emit: write }) => [
      await write({ companyId: company.id, type: 'ping', data: { endpointId: endpoint.id } }),
    ]);
    const [delivery] = await finishedDeliveries(endpoint.id, 1);
    expect(delivery).to.include({ status: 'succeeded', eventType: 'ping', eventId });
    expect(pinged.requests[0].body).to.include({ type: 'ping', id: eventId });
    expect(pinged.requests[0].body.data).to.deep.equal({ endpointId: endpoint.id });
    expect(pinged.requests[0].verifiedWith).to.equal(0);
    await endpointSettled(endpoint.id);
    await eventually(() => dispatched([eventId]), { what: 'ping dispatched' });
    expect(bystander.requests).to.have.lengthOf(0);
  });

  it('sends nothing more once its endpoint is deleted in the middle of a delivery (the records go with it)', async () => {
    const { knex, temporal } = testEnv();
    const company = await newCompany();
    let release: (code: number) => void = () => undefined;
    const answered = new Promise<number>((resolve) => (release = resolve));
    const { receiver, endpoint } = await receivingEndpoint(running.config, company.id, (n) =>
      n === 1 ? answered : 200,
    );
    await emit(company.id);
    await eventually(async () => receiver.requests.length === 1, { what: 'first attempt' });
    const [delivery] = await deliveriesOf(endpoint.id);
    // DELETE /outgoing-webhooks/{id} removes the endpoint and, by the cascade, its delivery records
    await WebhookEndpoint.query(knex).deleteById(endpoint.id);
    release(500);

    const outcome = await eventually(
      async () =>
        temporal.workflow
          .getHandle(deliveryWorkflowId(delivery.id))
          .result()
          .catch(() => undefined),
      { what: 'the handed-over delivery workflow ends' },
    );
    expect(outcome).to.deep.equal({ status: 'cancelled', attempts: 0, responseStatus: null });
    await deliveriesSettled([delivery]); // its batch and its own workflow are over
    expect(receiver.requests).to.have.lengthOf(1);
    expect(await deliveriesOf(endpoint.id)).to.have.lengthOf(0);
  });

  it('stops a delivery in flight when its endpoint is disabled between attempts (cancelled)', async () => {
    const company = await newCompany();
    let release: () => void = () => undefined;
    const disabledNow = new Promise<void>((resolve) => (release = resolve));
    const receiver = await startReceiver(async (n) => (n === 1 ? disabledNow.then(() => 500) : 200));
    const { endpoint } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    await emit(company.id);
    await eventually(async () => receiver.requests.length === 1, { what: 'first attempt' });
    await WebhookEndpoint.query(testEnv().knex)
      .findById(endpoint.id)
      .patch({ active: false, disabledReason: 'disabled_by_admin', disabledAt: new Date() });
    release();
    const [delivery] = await finishedDeliveries(endpoint.id, 1);
    expect(delivery).to.include({ status: 'cancelled', attempts: 1, responseStatus: 500 });
    await deliveriesSettled([delivery]);
    expect(receiver.requests).to.have.lengthOf(1);
    expect((await endpointRow(endpoint.id)).consecutiveFailures).to.equal(0);
  });
});

describe('webhook fan-out: a dispatcher crash neither loses nor duplicates a delivery', function () {
  this.timeout(120_000);
  let running: RunningWorker;

  before(async () => {
    await stopOtherDispatchers();
    // no dispatcher: these tests drive the fan-out steps by hand
    running = await startWebhookWorker(webhookTestConfig('webhooks-fanout'), { dispatcher: false });
  });
  after(async () => {
    await running.stop();
  });

  it('creates one delivery per (event, endpoint) however often a batch is fanned out, and starts left-behind ones once', async () => {
    const { knex, temporal, logger } = testEnv();
    const company = await newCompany();
    const receiver = await startReceiver();
    const { endpoint } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    const [eventId] = await emit(company.id);
    const event = (await OutboxEvent.query(knex).findById(eventId))!;
    const { fanOut, startLeftBehind } = createWebhookFanOut({
      config: running.config,
      knex,
      logger,
      temporal,
    });

    // the claiming transaction commits, then the process dies before starting the workflow
    const steps1 = await knex.transaction((trx: Knex.Transaction) => fanOut(trx, [event]));
    expect(steps1).to.have.lengthOf(1);
    // a second dispatcher run of the same batch (e.g. the first one's transaction was retried)
    const steps2 = await knex.transaction((trx: Knex.Transaction) => fanOut(trx, [event]));
    expect(steps2).to.have.lengthOf(0);
    const rows = await deliveriesOf(endpoint.id);
    expect(rows).to.have.lengthOf(1);
    expect(rows[0]).to.include({ status: 'pending', workflowStartedAt: null });

    // a later dispatcher iteration finds it (older than the grace period) and starts it
    expect(await startLeftBehind(0)).to.equal(1);
    // starting again, as the lost after-commit step would have, is harmless: same workflow id
    await steps1[0]();
    expect(await startLeftBehind(0)).to.equal(0);
    const [delivery] = await finishedDeliveries(endpoint.id, 1);
    expect(delivery.status).to.equal('succeeded');
    expect(delivery.workflowStartedAt).to.be.instanceOf(Date);
    await deliveriesSettled([delivery]);
    expect(receiver.requests).to.have.lengthOf(1);
    // and once finished, a start with the same id does not run it again
    await steps1[0]();
    await deliveriesSettled([delivery]);
    expect(receiver.requests).to.have.lengthOf(1);
    // no dispatcher ran here: mark the event sent so no later dispatcher picks it up
    await OutboxEvent.query(knex).findById(eventId).patch({ dispatchedAt: new Date() });
  });
  it('posts a delivery once even when two batches claim it (only the workflow that owns a delivery attempts it)', async () => {
    const { knex, temporal } = testEnv();
    const company = await newCompany();
    const receiver = await startReceiver();
    const { endpoint, secret } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    receiver.secrets = [secret];
    const events = await emit(company.id, 'file.uploaded', 3);
    const rows = await OutboxEvent.query(knex).whereIn('id', events);
    const { fanOut } = createWebhookFanOut({
      config: running.config,
      knex,
      logger: testEnv().logger,
      temporal,
    });
    await knex.transaction((trx: Knex.Transaction) => fanOut(trx, rows));
    const deliveries = await deliveriesOf(endpoint.id);
    expect(deliveries).to.have.lengthOf(3);
    const [d1, d2, d3] = deliveries.map((d) => ({ id: d.id, companyId: company.id }));

    // e.g. a batch started, its mark lost, and the sweep grouping the same deliveries differently
    const groups = [[d1, d2, d3], [d2, d3], [d3]];
    await Promise.all(groups.map((group) => startDeliveryBatches(temporal, knex, running.config, group)));
    const done = await finishedDeliveries(endpoint.id, 3);
    expect(done.every((d) => d.status === 'succeeded' && d.attempts === 1)).to.equal(true);
    const results = await Promise.all(
      groups.map((group) => temporal.workflow.getHandle(batchWorkflowIdOf(group.map((d) => d.id))).result()),
    );
    expect(results.reduce((n, r) => n + r.succeeded, 0)).to.equal(3);
    await endpointSettled(endpoint.id);
    expect(receiver.requests.map((r) => r.headers['webhook-id']).sort()).to.deep.equal([...events].sort());
    const owners = await WebhookDelivery.query(knex).whereIn('id', [d1.id, d2.id, d3.id]);
    expect(owners.every((o) => o.ownerWorkflowId?.startsWith('webhook-batch:'))).to.equal(true);
    await OutboxEvent.query(knex).whereIn('id', events).patch({ dispatchedAt: new Date() });
  });
  it('counts no attempt for an endpoint disabled before its first attempt (cancelled, nothing sent)', async () => {
    const { knex, temporal } = testEnv();
    const company = await newCompany();
    const receiver = await startReceiver();
    const { endpoint } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    const steps = await fanOutByHand(running.config, await emit(company.id));
    await WebhookEndpoint.query(knex).findById(endpoint.id).patch({ active: false });
    for (const step of steps) await step();

    const [delivery] = await finishedDeliveries(endpoint.id, 1);
    expect(delivery).to.include({
      status: 'cancelled',
      attempts: 0,
      lastAttemptAt: null,
      responseStatus: null,
    });
    const result = await temporal.workflow.getHandle(batchWorkflowIdOf([delivery.id])).result();
    expect(result).to.include({ deliveries: 1, cancelled: 1 });
    expect(receiver.requests).to.have.lengthOf(0);
  });

  it('leaves a delivery another workflow owns alone (a delivery workflow started for it ends without touching it)', async () => {
    const { knex, temporal } = testEnv();
    const company = await newCompany();
    const receiver = await startReceiver();
    const { endpoint } = await insertEndpoint(running.config, company.id, { url: receiver.url });
    await fanOutByHand(running.config, await emit(company.id));
    const [delivery] = await deliveriesOf(endpoint.id);
    await WebhookDelivery.query(knex)
      .findById(delivery.id)
      .patch({ ownerWorkflowId: 'webhook-batch:elsewhere' });

    const { errors } = await startDeliveryWorkflows(temporal, knex, running.config, [
      { id: delivery.id, companyId: company.id },
    ]);
    expect(errors).to.have.lengthOf(0);
    const outcome = await temporal.workflow.getHandle(deliveryWorkflowId(delivery.id)).result();
    expect(outcome).to.deep.equal({ status: 'owned-elsewhere', attempts: 0, responseStatus: null });
    const after = (await WebhookDelivery.query(knex).findById(delivery.id))!;
    expect(after).to.include({ status: 'pending', attempts: 0, completedAt: null });
    expect(after.ownerWorkflowId).to.equal('webhook-batch:elsewhere');
    expect(receiver.requests).to.have.lengthOf(0);
    await WebhookDelivery.query(knex).findById(delivery.id).delete();
  });

  it('the sweep starts a batch that owns a left-behind delivery grouped with one whose batch already exists', async () => {
    const { knex, temporal, logger } = testEnv();
    const company = await newCompany();
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { receiver, endpoint } = await receivingEndpoint(running.config, company.id, async (n) =>
      n === 1 ? released.then(() => 200) : 200,
    );
    const [e1] = await emit(company.id);
    await fanOutByHand(running.config, [e1]);
    const [d1] = await deliveriesOf(endpoint.id);
    // d1's batch was created on the server, but its start timed out on the client: d1 is not marked
    await startDeliveryBatches(temporal, knex, running.config, [{ id: d1.id, companyId: company.id }]);
    await WebhookDelivery.query(knex).findById(d1.id).patch({ workflowStartedAt: null });
    await eventually(async () => receiver.requests.length === 1, { what: 'first attempt of d1' });
    // a later delivery of the same company whose start failed altogether
    const [e3] = await emit(company.id);
    await fanOutByHand(running.config, [e3]);
    const d3 = (await deliveriesOf(endpoint.id)).find((d) => d.id !== d1.id)!;

    // the sweep groups both, oldest first: the group's batch must be one that owns d3
    const { startLeftBehind } = createWebhookFanOut({ config: running.config, knex, logger, temporal });
    expect(await startLeftBehind(0)).to.equal(2);
    release();
    const done = await finishedDeliveries(endpoint.id, 2, 20_000);
    expect(done.map((d) => [d.status, d.attempts])).to.deep.equal([
      ['succeeded', 1],
      ['succeeded', 1],
    ]);
    await endpointSettled(endpoint.id);
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).to.deep.equal([e1, e3]);
    const byId = new Map(done.map((d) => [d.id, d]));
    expect(byId.get(d3.id)!.ownerWorkflowId).to.not.equal(byId.get(d1.id)!.ownerWorkflowId);
    expect(done.every((d) => d.workflowStartedAt)).to.equal(true);
  });

  it('retries a delivery whose own workflow had already ended as owned-elsewhere when its batch hands it over', async () => {
    const { knex, temporal } = testEnv();
    const company = await newCompany();
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { receiver, endpoint } = await receivingEndpoint(running.config, company.id, async (n) =>
      n === 1 ? released.then(() => 500) : 200,
    );
    const steps = await fanOutByHand(running.config, await emit(company.id));
    for (const step of steps) await step();
    await eventually(async () => receiver.requests.length === 1, { what: 'first attempt (in the batch)' });
    const [delivery] = await deliveriesOf(endpoint.id);
    // its own workflow, started meanwhile (e.g. a start of the API's that reached the server late), finds the
    // batch owning it and ends without touching it
    await startDeliveryWorkflows(temporal, knex, running.config, [
      { id: delivery.id, companyId: company.id },
    ]);
    const own = temporal.workflow.getHandle(deliveryWorkflowId(delivery.id));
    expect(await own.result()).to.deep.equal({
      status: 'owned-elsewhere',
      attempts: 0,
      responseStatus: null,
    });

    // the first attempt fails: the batch hands the delivery over to webhook-delivery:<id> all the same
    release();
    const [done] = await finishedDeliveries(endpoint.id, 1, 20_000);
    expect(done).to.include({ status: 'succeeded', attempts: 2, responseStatus: 200 });
    expect(done.ownerWorkflowId).to.equal(deliveryWorkflowId(delivery.id));
    expect(await temporal.workflow.getHandle(deliveryWorkflowId(delivery.id)).result()).to.deep.equal({
      status: 'succeeded',
      attempts: 2,
      responseStatus: 200,
    });
    await deliveriesSettled([done]);
    expect(receiver.requests).to.have.lengthOf(2);
  });

  it('finishes a delivery as failed once a 410 is recorded, even if the worker is lost right after (batch)', async () => {
    const { knex, temporal, logger } = testEnv();
    const company = await newCompany();
    const { receiver, endpoint } = await receivingEndpoint(running.config, company.id);
    const steps = await fanOutByHand(running.config, await emit(company.id));
    const [delivery] = await deliveriesOf(endpoint.id);
    // the batch's first attempt, answered 410 and recorded; its worker lost before it could go on
    const store = createDeliveryStore({ knex, logger });
    await store.claim(delivery.id, 'webhook-batch:lost');
    await store.beginFirstAttempt(delivery.id);
    await store.recordFailed((await store.load(delivery.id))!, {
      attempt: 1,
      responseStatus: 410,
      error: 'attempt 1: receiver answered 410 Gone; endpoint disabled',
      willRetry: false,
      gone: true,
    });
    // what runs after: the batch started again (it was never marked started) and the sweep
    await WebhookDelivery.query(knex).findById(delivery.id).patch({ ownerWorkflowId: null });
    for (const step of steps) await step();
    await eventually(
      async () =>
        temporal.workflow
          .getHandle(batchWorkflowIdOf([delivery.id]))
          .result()
          .catch(() => undefined),
      { what: 'the batch ends' },
    );
    await deliveriesSettled([delivery]);

    const [done] = await deliveriesOf(endpoint.id);
    expect(done).to.include({ status: 'failed', attempts: 1, responseStatus: 410 });
    expect(done.completedAt).to.be.instanceOf(Date);
    const row = await endpointRow(endpoint.id);
    expect(row).to.include({ active: false, disabledReason: 'receiver_gone', consecutiveFailures: 1 });
    expect(receiver.requests).to.have.lengthOf(0);
  });

  it('finishes a delivery as failed once a 410 is recorded, even if the worker is lost right after (its own workflow)', async () => {
    const { knex, temporal, logger } = testEnv();
    const company = await newCompany();
    const { receiver, endpoint } = await receivingEndpoint(running.config, company.id);
    await fanOutByHand(running.config, await emit(company.id));
    const [delivery] = await deliveriesOf(endpoint.id);
    // attempt 1 of the delivery's own workflow answered 410 and was recorded; the worker was lost before
    // the activity returned, so Temporal runs the activity again
    const store = createDeliveryStore({ knex, logger });
    await store.claim(delivery.id, deliveryWorkflowId(delivery.id));
    await store.recordFailed((await store.load(delivery.id))!, {
      attempt: 1,
      responseStatus: 410,
      error: 'attempt 1: receiver answered 410 Gone; endpoint disabled',
      willRetry: false,
      gone: true,
    });
    await startDeliveryWorkflows(temporal, knex, running.config, [
      { id: delivery.id, companyId: company.id },
    ]);
    const outcome = await temporal.workflow.getHandle(deliveryWorkflowId(delivery.id)).result();
    expect(outcome).to.deep.equal({ status: 'failed', attempts: 1, responseStatus: 410 });
    const [done] = await deliveriesOf(endpoint.id);
    expect(done).to.include({ status: 'failed', attempts: 1, responseStatus: 410 });
    expect(done.lastError).to.equal('attempt 1: receiver answered 410 Gone; endpoint disabled');
    expect((await endpointRow(endpoint.id)).consecutiveFailures).to.equal(1);
    expect(receiver.requests).to.have.lengthOf(0);
  });
});

describe('webhook retention', function () {
  this.timeout(120_000);
  let running: RunningWorker;

  before(async () => {
    running = await startWebhookWorker(webhookTestConfig('webhooks-retention'), { dispatcher: false });
  });
  after(async () => {
    await running.stop();
  });

  it('removes delivery records older than 30 days through the retention workflow, and keeps younger ones', async () => {
    const { knex, temporal } = testEnv();
    const company = await newCompany();
    const { endpoint } = await insertEndpoint(running.config, company.id, {
      url: 'https://93.184.216.34/hook',
    });
    const day = 24 * 3600_000;
    const make = (ageMs: number) =>
      WebhookDelivery.query(knex).insert({
        id: randomUUID(),
        companyId: company.id,
        endpointId: endpoint.id,
        eventId: randomUUID(),
        eventType: 'file.uploaded',
        eventData: {},
        eventCreatedAt: new Date(Date.now() - ageMs),
        status: 'succeeded',
        attempts: 1,
        completedAt: new Date(Date.now() - ageMs),
        workflowStartedAt: new Date(Date.now() - ageMs),
        createdAt: new Date(Date.now() - ageMs),
      });
    const old1 = await make(31 * day);
    const old2 = await make(30 * day + 60_000);
    const young = await make(29 * day);
    const fresh = await make(0);

    const result = await temporal.workflow.execute('webhookDeliveryRetentionWorkflow', {
      workflowId: `retention:webhook-deliveries:test-${randomUUID()}`,
      taskQueue: running.config.temporal.taskQueue,
    });
    expect((result as { deleted: number }).deleted).to.be.at.least(2);
    const left = (await deliveriesOf(endpoint.id)).map((d) => d.id);
    expect(left).to.include.members([young.id, fresh.id]);
    expect(left).to.not.include.members([old1.id]);
    expect(left).to.not.include(old2.id);
  });

  it('is a Temporal Schedule created idempotently at worker start', async () => {
    const { temporal } = testEnv();
    const id = await ensureWebhookRetentionSchedule(temporal, running.config);
    expect(await ensureWebhookRetentionSchedule(temporal, running.config)).to.equal(id);
    expect(id).to.equal(`retention:webhook-deliveries:${running.config.temporal.taskQueue}`);
    const handle = temporal.schedule.getHandle(id);
    try {
      const description = await handle.describe();
      expect(description.action.type).to.equal('startWorkflow');
      expect((description.action as { workflowType: string }).workflowType).to.equal(
        'webhookDeliveryRetentionWorkflow',
      );
      expect(description.spec.intervals?.[0]?.every).to.equal(3600_000);
    } finally {
      await handle.delete();
    }
  });
});

describe('webhook delivery with a worker killed in the middle of an attempt', function () {
  this.timeout(120_000);

  it('completes once another worker runs, with the record matching what the receiver saw', async () => {
    const { knex, temporal, logger } = testEnv();
    // 3 s per attempt: Temporal gives the lost batch activity up after 3 s + 5 s without a heartbeat
    const vars = webhookTestEnvVars('webhooks-crash', { WEBHOOK_ATTEMPT_TIMEOUT_MS: '3000' });
    const config = webhookTestConfig('webhooks-crash', { WEBHOOK_ATTEMPT_TIMEOUT_MS: '3000' });
    const child = await spawnWorkerProcess(vars);
    const exited = new Promise((resolve) => child.once('exit', resolve));

    const company = await newCompany();
    const receiver = await startReceiver((n) => (n === 1 ? 'hang' : 200));
    const { endpoint, secret } = await insertEndpoint(config, company.id, { url: receiver.url });
    receiver.secrets = [secret];
    const [eventId] = await emit(company.id);
    const event = (await OutboxEvent.query(knex).findById(eventId))!;
    // the dispatcher's own steps, on this test's task queue
    const { fanOut } = createWebhookFanOut({ config, knex, logger, temporal });
    const steps = await knex.transaction(async (trx: Knex.Transaction) => {
      const after = await fanOut(trx, [event]);
      await trx('outbox').where({ id: eventId }).update({ dispatchedAt: trx.fn.now() });
      return after;
    });
    for (const step of steps) await step();

    await eventually(async () => receiver.requests.length === 1, {
      what: 'first attempt',
      timeoutMs: 30_000,
    });
    child.kill('SIGKILL');
    await exited;
    const [during] = await deliveriesOf(endpoint.id);
    // the attempt the receiver saw is on record, its outcome not (the worker died waiting for it)
    expect(during).to.include({ status: 'pending', attempts: 1, completedAt: null });

    await startWebhookWorker(config, { dispatcher: false });
    const [delivery] = await finishedDeliveries(endpoint.id, 1, 60_000);
    expect(delivery).to.include({ status: 'succeeded', attempts: 2, responseStatus: 200 });
    expect(delivery.lastError).to.equal('attempt 1: no outcome recorded (the worker making it was lost)');
    expect(receiver.requests).to.have.lengthOf(2);
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).to.deep.equal([eventId, eventId]);
    expect(receiver.requests.map((r) => r.verifiedWith)).to.deep.equal([0, 0]);
    // the batch's activity ran again on the new worker once the lost one stopped heartbeating, and handed
    // the delivery to its own workflow, which made attempt 2
    const batch = temporal.workflow.getHandle(batchWorkflowIdOf([delivery.id]));
    expect((await batch.result()).retrying).to.deep.equal([delivery.id]);
    const events = (await batch.fetchHistory()).events ?? [];
    const started = events.find(
      (e) => e.activityTaskStartedEventAttributes,
    )!.activityTaskStartedEventAttributes!;
    expect(started.attempt).to.equal(2);
    expect(started.lastFailure?.timeoutFailureInfo, 'the lost run: heartbeat timeout').to.exist;
    const handle = temporal.workflow.getHandle(deliveryWorkflowId(delivery.id));
    expect(await handle.result()).to.deep.equal({ status: 'succeeded', attempts: 2, responseStatus: 200 });
    await deliveriesSettled([delivery]);
    expect(receiver.requests).to.have.lengthOf(2);
  });

  it('counts an attempt of a delivery’s own workflow before sending it: a worker lost during attempt 5 leaves 5 on record', async () => {
    const { knex, temporal } = testEnv();
    const vars = webhookTestEnvVars('webhooks-crash-own', { WEBHOOK_ATTEMPT_TIMEOUT_MS: '3000' });
    const config = webhookTestConfig('webhooks-crash-own', { WEBHOOK_ATTEMPT_TIMEOUT_MS: '3000' });
    const child = await spawnWorkerProcess(vars);
    const exited = new Promise((resolve) => child.once('exit', resolve));

    const company = await newCompany();
    const receiver = await startReceiver((n) => (n < 5 ? 500 : 'hang'));
    const { endpoint, secret } = await insertEndpoint(config, company.id, { url: receiver.url });
    receiver.secrets = [secret];
    // a redelivery's record (marked started: no dispatcher's sweep may take it), all 5 attempts in its
    // own workflow
    const deliveryId = randomUUID();
    await WebhookDelivery.query(knex).insert({
      id: deliveryId,
      companyId: company.id,
      endpointId: endpoint.id,
      eventId: randomUUID(),
      eventType: 'file.uploaded',
      eventData: { fileId: randomUUID() },
      eventCreatedAt: new Date(),
      workflowStartedAt: new Date(),
    });
    await startDeliveryWorkflows(temporal, knex, config, [{ id: deliveryId, companyId: company.id }]);

    await eventually(async () => receiver.requests.length === 5, { what: 'attempt 5', timeoutMs: 30_000 });
    child.kill('SIGKILL');
    await exited;
    // the attempt the receiver is seeing is on record before any answer
    const during = (await WebhookDelivery.query(knex).findById(deliveryId))!;
    expect(during).to.include({ status: 'retrying', attempts: 5, responseStatus: null, completedAt: null });

    await startWebhookWorker(config, { dispatcher: false });
    const handle = temporal.workflow.getHandle(deliveryWorkflowId(deliveryId));
    expect(await handle.result()).to.deep.equal({ status: 'failed', attempts: 5, responseStatus: null });
    const delivery = (await WebhookDelivery.query(knex).findById(deliveryId))!;
    expect(delivery).to.include({ status: 'failed', attempts: 5, responseStatus: null });
    expect(delivery.lastError).to.match(/^the last attempt ended without recording/);
    expect(receiver.requests).to.have.lengthOf(5);
  });
});
