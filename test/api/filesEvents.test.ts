import { expect } from 'chai';
import { periodKey } from '../../domain/plans/plans';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { call } from '../helpers/http';
import { csv, uploadFile, uploadTo } from '../helpers/files';
import { eventually } from '../helpers/temporal';
import {
  endpointSettled,
  startReceiver,
  startWebhookApp,
  startWebhookWorker,
  stopOtherDispatchers,
  webhookTestConfig,
  type RunningWorker,
} from '../helpers/webhooks';

describe('files: events delivered as signed webhooks (end to end)', function () {
  this.timeout(120_000);
  let running: RunningWorker;
  let baseUrl: string;

  before(async () => {
    await stopOtherDispatchers();
    const config = webhookTestConfig('files-events');
    running = await startWebhookWorker(config);
    ({ baseUrl } = await startWebhookApp(config));
  });
  after(async () => {
    await running.stop();
  });

  it('file.uploaded (file and version) and quota.threshold reach the company endpoint; nothing for a failed upload or another company', async () => {
    const a = await createTeam({ plan: 'free' });
    const b = await createTeam({ plan: 'free' });
    const receiver = await startReceiver();
    const otherReceiver = await startReceiver();
    const endpointIds: string[] = [];
    for (const [team, rec] of [
      [a, receiver],
      [b, otherReceiver],
    ] as const) {
      const created = await call('POST', '/outgoing-webhooks', {
        baseUrl,
        token: team.adminToken,
        json: { name: 'files', url: rec.url, events: ['file.uploaded', 'quota.threshold'] },
      });
      expect(created.status, created.text).to.equal(201);
      rec.secrets = [created.body.secret];
      endpointIds.push(created.body.id);
    }
    // 7 of 10 used already: the next upload makes 8 (80%)
    await testEnv()
      .knex('fileUsage')
      .insert({ companyId: a.company.id, periodKey: periodKey(), filesUsed: 7 });
    const first = await uploadFile(csv(2), { token: a.adminToken, baseUrl });
    expect(first.status, first.text).to.equal(201);
    const failed = await uploadFile('no table here', { token: a.adminToken, baseUrl });
    expect(failed.status).to.equal(400);
    const second = await uploadTo(`/files/${first.body.id}/versions`, csv(3), {
      token: a.adminToken,
      baseUrl,
    });
    expect(second.status, second.text).to.equal(201);

    await eventually(async () => receiver.requests.length >= 3, {
      what: 'three deliveries',
      timeoutMs: 60_000,
    });
    // nothing more can arrive once every event of both companies is dispatched and every delivery's
    // workflows are over
    const { knex } = testEnv();
    await eventually(
      async () =>
        !(await knex('outbox')
          .whereIn('companyId', [a.company.id, b.company.id])
          .whereNull('dispatchedAt')
          .first()),
      { what: 'events dispatched', timeoutMs: 60_000 },
    );
    for (const id of endpointIds) await endpointSettled(id);
    const got = receiver.requests.map((r) => ({
      type: r.body.type,
      data: r.body.data,
      verified: r.verifiedWith,
    }));
    expect(got).to.have.deep.members([
      {
        type: 'file.uploaded',
        data: { fileId: first.body.id, datasetId: first.body.datasetId, version: 1 },
        verified: 0,
      },
      {
        type: 'file.uploaded',
        data: { fileId: first.body.id, datasetId: first.body.datasetId, version: 2 },
        verified: 0,
      },
      {
        type: 'quota.threshold',
        data: { threshold: 80, plan: 'free', periodKey: periodKey(), filesUsed: 8, filesLimit: 10 },
        verified: 0,
      },
    ]);
    for (const r of receiver.requests)
      expect(r.body).to.include({ companyId: a.company.id, schemaVersion: 1 });
    expect(otherReceiver.requests).to.deep.equal([]);
  });
});
