/**
 * report.ready and report.failed reach a real webhook receiver exactly once per build, and a worker
 * killed in the middle of a build leaves one report and one event once another worker has finished it.
 */
import { expect } from 'chai';
import { testEnv, startWorker } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { call } from '../helpers/http';
import { uploadFile } from '../helpers/files';
import { eventually } from '../helpers/temporal';
import {
  finishedDeliveries,
  spawnWorkerProcess,
  startEventsReceiver,
  startWebhookApp,
  stopOtherDispatchers,
  webhookTestConfig,
  webhookTestEnvVars,
} from '../helpers/webhooks';
import { ensureOutboxDispatcher } from '../../worker/worker';

const GOOD = 'id,v\n1,a\n2,b\n';
const BAD = 'id,v\n1,a\n2,"never closed\n';

async function reportEvents(fileId: string) {
  return testEnv()
    .knex('outbox')
    .whereIn('type', ['report.ready', 'report.failed'])
    .whereRaw(`data->>'fileId' = ?`, [fileId])
    .orderBy('createdAt');
}

describe('reports: events and a worker lost mid-build', function () {
  this.timeout(180_000);

  before(async () => {
    await stopOtherDispatchers();
  });

  it('report.ready and report.failed reach the receiver exactly once per build', async () => {
    const { running, baseUrl, team, receiver, endpoint } = await startEventsReceiver('report-events', [
      'report.ready',
      'report.failed',
    ]);
    try {
      const good = await uploadFile(GOOD, { token: team.adminToken, baseUrl });
      const bad = await uploadFile(BAD, { token: team.adminToken, baseUrl });
      expect([good.status, bad.status]).to.deep.equal([201, 201]);
      await eventually(
        async () =>
          (await call('GET', `/files/${good.body.id}/report`, { token: team.adminToken, baseUrl })).body
            ?.status === 'ready',
        { what: 'the first build ready', timeoutMs: 60_000 },
      );
      // a second build of the good file: its own event
      const rebuild = await call('POST', `/files/${good.body.id}/versions/1/report/rebuild`, {
        token: team.adminToken,
        baseUrl,
      });
      expect(rebuild.status, rebuild.text).to.equal(202);

      const deliveries = await finishedDeliveries(endpoint.id, 3, 90_000);
      expect(deliveries.every((d) => d.status === 'succeeded')).to.equal(true);
      const got = receiver.requests.map((r) => [r.body.type, r.body.data.fileId, r.verifiedWith]);
      expect(got).to.have.deep.members([
        ['report.ready', good.body.id, 0],
        ['report.ready', good.body.id, 0],
        ['report.failed', bad.body.id, 0],
      ]);
      const failed = receiver.requests.find((r) => r.body.type === 'report.failed')!;
      expect(failed.body.data).to.deep.include({ fileId: bad.body.id, reportStatus: 'failed', version: 1 });
      expect(failed.rawBody).not.to.include('never closed');
      // the outbox holds one event per build and no more
      expect((await reportEvents(good.body.id)).map((e: any) => e.type)).to.deep.equal([
        'report.ready',
        'report.ready',
      ]);
      expect((await reportEvents(bad.body.id)).map((e: any) => e.type)).to.deep.equal(['report.failed']);
    } finally {
      await running.stop();
    }
  });

  it('a worker killed in the middle of a build: another worker finishes it, one report and one event', async () => {
    const env = webhookTestEnvVars('report-kill', { TEST_REPORT_STEP_WAIT_MS: '120000' });
    const config = webhookTestConfig('report-kill');
    const child = await spawnWorkerProcess(env);
    const { baseUrl } = await startWebhookApp(config);
    const team = await createTeam({ plan: 'premium' });
    const up = await uploadFile(GOOD, { token: team.adminToken, baseUrl });
    const id = up.body.id as string;
    // the child holds the build in its test step: kill it there
    await eventually(
      async () => {
        const res = await call('GET', `/files/${id}/report`, { token: team.adminToken, baseUrl });
        return res.body?.status === 'building' && res.body.progress?.phase === 'testWait';
      },
      { what: 'the build running in the child worker', timeoutMs: 60_000 },
    );
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    // another worker (no waiting step) on the same queue takes the build over after the heartbeat timeout
    const worker = await startWorker({ config });
    const dispatcher = await ensureOutboxDispatcher(testEnv().temporal, config);
    try {
      const ready = await eventually(
        async () => {
          const res = await call('GET', `/files/${id}/report`, { token: team.adminToken, baseUrl });
          return res.body?.status === 'ready' ? res.body : undefined;
        },
        { what: 'the build finished by the second worker', timeoutMs: 90_000 },
      );
      expect(ready.build).to.equal(1);
      expect(ready.profile.sheets[0].rows).to.equal(2);
      expect(await testEnv().knex('reports').where({ fileId: id })).to.have.length(1);
      expect((await reportEvents(id)).map((e: any) => e.type)).to.deep.equal(['report.ready']);
      const result: unknown = await testEnv().temporal.workflow.getHandle(`report:${id}:v1`).result();
      expect(result).to.deep.equal({ status: 'ready' });
    } finally {
      await testEnv()
        .temporal.workflow.getHandle(dispatcher)
        .terminate('test done')
        .catch(() => undefined);
      await worker.stop();
    }
  });
});
