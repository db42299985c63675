/**
 * The address guard at delivery time, with the DEFAULT setting (private targets refused): the address
 * actually connected to is checked, so a literal private address or a name that now resolves to one
 * (DNS rebinding) is refused without the receiver ever being reached.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { createWebhookActivities } from '../../activities/webhooks';
import { createWebhookSender } from '../../domain/webhooks/sender';
import { checkTargetUrl, type Resolver } from '../../domain/webhooks/targets';
import { WebhookDelivery } from '../../db/models';
import { testEnv } from '../helpers/env';
import { REFUSED_HOSTS } from '../helpers/refusedTargets';
import { insertEndpoint, newCompany, startReceiver, webhookTestConfig } from '../helpers/webhooks';

async function deliveryFor(companyId: string, endpointId: string, made: string[]): Promise<WebhookDelivery> {
  const id = randomUUID();
  made.push(id);
  return WebhookDelivery.query(testEnv().knex).insertAndFetch({
    id,
    companyId,
    endpointId,
    eventId: randomUUID(),
    eventType: 'ping',
    eventData: { endpointId },
    eventCreatedAt: new Date(),
  });
}

async function attempt(
  activities: ReturnType<typeof createWebhookActivities>,
  deliveryId: string,
): Promise<unknown> {
  try {
    return await new MockActivityEnvironment({ attempt: 1 }).run(
      (input: { deliveryId: string }) => activities.attemptWebhookDelivery(input),
      { deliveryId },
    );
  } catch (err) {
    return err;
  }
}

describe('webhook attempts refuse private targets at connect time (default setting)', function () {
  this.timeout(30_000);
  const made: string[] = [];
  // these deliveries never had a workflow: finish them so no dispatcher sweep starts one later
  after(async () => {
    await WebhookDelivery.query(testEnv().knex)
      .whereIn('id', made)
      .patch({ completedAt: new Date(), status: 'cancelled' });
  });
  // the default, except plain http so a loopback receiver could be reached at all if the guard failed
  const defaults = () => webhookTestConfig('unused', { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });

  it('refuses every private address form before connecting', async () => {
    const config = defaults();
    expect(config.webhooks.allowPrivateTargets).to.equal(false);
    const receiver = await startReceiver();
    const port = new URL(receiver.url).port;
    const sender = createWebhookSender({ policy: config.webhooks, timeoutMs: 1000 });
    try {
      for (const [host, what] of [...REFUSED_HOSTS, ['localhost', 'loopback by name'] as [string, string]]) {
        const outcome = await sender.post(`http://${host}:${port}/hook`, {}, '{}');
        expect(outcome.status, `${host} (${what})`).to.equal(null);
        expect(outcome.error, `${host} (${what})`).to.match(/refused/);
      }
    } finally {
      sender.close();
    }
    // no wait needed: a request that had been sent would have been recorded before the receiver answered,
    // and the sender returns only after the answer (or a refusal before connecting)
    expect(receiver.requests).to.have.lengthOf(0);
  });

  it('records a refused attempt against a loopback endpoint; the test-only setting is what lets it through', async () => {
    const company = await newCompany();
    const receiver = await startReceiver();
    const config = defaults();
    const { endpoint } = await insertEndpoint(config, company.id, { url: receiver.url });
    const delivery = await deliveryFor(company.id, endpoint.id, made);
    const refused = await attempt(createWebhookActivities({ ...testEnv(), config }), delivery.id);
    expect(refused).to.be.instanceOf(ApplicationFailure);
    expect((refused as ApplicationFailure).type).to.equal('WebhookAttemptFailed');
    const row = (await WebhookDelivery.query(testEnv().knex).findById(delivery.id))!;
    expect(row).to.include({ status: 'retrying', attempts: 1, responseStatus: null });
    expect(row.lastError).to.equal('attempt 1: url refused: 127.0.0.1 is not a public address (loopback)');
    expect(receiver.requests).to.have.lengthOf(0);

    const allowed = webhookTestConfig('unused');
    const result = await attempt(createWebhookActivities({ ...testEnv(), config: allowed }), delivery.id);
    expect(result).to.deep.equal({ attempt: 1, responseStatus: 200 });
    expect(receiver.requests).to.have.lengthOf(1);
  });

  it('refuses a name that resolved to a public address at creation but resolves to loopback at delivery (DNS rebinding)', async () => {
    const company = await newCompany();
    const receiver = await startReceiver();
    const port = new URL(receiver.url).port;
    const config = defaults();
    const url = `http://rebind.test:${port}/hook`;
    let lookups = 0;
    const rebinding: Resolver = (_host, _options, callback) =>
      callback(null, [{ address: lookups++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }]);
    // at creation the name looks public
    expect(await checkTargetUrl(url, config.webhooks, rebinding)).to.equal(null);
    const { endpoint } = await insertEndpoint(config, company.id, { url });
    const delivery = await deliveryFor(company.id, endpoint.id, made);

    const refused = await attempt(
      createWebhookActivities({ ...testEnv(), config, resolver: rebinding }),
      delivery.id,
    );
    expect((refused as ApplicationFailure).type).to.equal('WebhookAttemptFailed');
    const row = (await WebhookDelivery.query(testEnv().knex).findById(delivery.id))!;
    expect(row.lastError).to.equal(
      'attempt 1: refused: rebind.test resolves to 127.0.0.1 is not a public address (loopback)',
    );
    expect(lookups).to.be.at.least(2);
    // no wait needed: a request that had been sent would have been recorded before the receiver answered,
    // and the sender returns only after the answer (or a refusal before connecting)
    expect(receiver.requests).to.have.lengthOf(0);
  });
});

describe('webhook attempt outcomes: any 2xx is success, anything else a failure, redirects not followed', function () {
  this.timeout(30_000);
  const made: string[] = [];
  after(async () => {
    await WebhookDelivery.query(testEnv().knex)
      .whereIn('id', made)
      .whereNull('completedAt')
      .patch({ completedAt: new Date(), status: 'cancelled' });
  });
  const config = () => webhookTestConfig('unused');

  it('counts 204 (and 299) as success', async () => {
    for (const code of [204, 299]) {
      const company = await newCompany();
      const receiver = await startReceiver(() => code);
      const { endpoint } = await insertEndpoint(config(), company.id, { url: receiver.url });
      const delivery = await deliveryFor(company.id, endpoint.id, made);
      const result = await attempt(createWebhookActivities({ ...testEnv(), config: config() }), delivery.id);
      expect(result, String(code)).to.deep.equal({ attempt: 1, responseStatus: code });
      const row = (await WebhookDelivery.query(testEnv().knex).findById(delivery.id))!;
      expect(row).to.include({ status: 'succeeded', responseStatus: code });
    }
  });

  it('counts a redirect as a failed attempt and does not follow it', async () => {
    const company = await newCompany();
    const target = await startReceiver();
    const redirecting = http.createServer((_req, res) => {
      res.writeHead(302, { location: target.url }).end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hook`;
      const { endpoint } = await insertEndpoint(config(), company.id, { url });
      const delivery = await deliveryFor(company.id, endpoint.id, made);
      const failed = await attempt(createWebhookActivities({ ...testEnv(), config: config() }), delivery.id);
      expect((failed as ApplicationFailure).type).to.equal('WebhookAttemptFailed');
      const row = (await WebhookDelivery.query(testEnv().knex).findById(delivery.id))!;
      expect(row).to.include({ status: 'retrying', responseStatus: 302 });
      expect(row.lastError).to.equal('attempt 1: receiver answered 302');
      // a followed redirect would have been answered (and so recorded) before the attempt returned
      expect(target.requests).to.have.lengthOf(0);
    } finally {
      redirecting.closeAllConnections();
      await new Promise<void>((resolve) => redirecting.close(() => resolve()));
    }
  });
});
