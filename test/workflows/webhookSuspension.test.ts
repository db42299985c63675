/**
 * Webhooks of a suspended company (README "Billing"): deliveries already handed to a workflow — retries in
 * progress, a batch's first attempts — send nothing while the company is suspended and go on, their attempts
 * intact, once it is reactivated. Real worker, Temporal and HTTP receivers on loopback (test-only settings).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { transact } from '../../db/transaction';
import type { CompanyStatus } from '../../db/models';
import { setCompanyStatus } from '../../domain/billing/companyStatus';
import { batchWorkflowIdOf, startDeliveryBatches } from '../../domain/webhooks/starts';
import { deliveryWorkflowId } from '../../workflows/definitions/webhooks';
import { testEnv } from '../helpers/env';
import { eventually } from '../helpers/temporal';
import {
  deliveriesOf,
  deliveriesSettled,
  finishedDeliveries,
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
    const deliveryId = randomUUID();
    await testEnv()
      .knex('webhookDeliveries')
      .insert({
        id: deliveryId,
        companyId: company.id,
        endpointId: endpoint.id,
        eventId: randomUUID(),
        eventType: 'file.uploaded',
        eventData: JSON.stringify({ fileId: randomUUID(), version: 1 }),
        eventCreatedAt: new Date(),
        status: 'pending',
      });
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
