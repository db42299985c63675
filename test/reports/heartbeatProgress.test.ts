/**
 * What an operator sees of a build in progress in Temporal (the Web UI's pending activity, `temporal workflow
 * describe`): the heartbeat details carry the build's progress, at most about a second old — the SDK would
 * otherwise hold heartbeats back for 0.8 × the heartbeat timeout (8 s) and show the first one meanwhile.
 */
import { expect } from 'chai';
import { defaultPayloadConverter } from '@temporalio/common';
import type { AnalysisStep } from '../../domain/reports/engine';
import { startWorker, testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { call } from '../helpers/http';
import { uploadFile } from '../helpers/files';
import { eventually } from '../helpers/temporal';
import { startWebhookApp, webhookTestConfig } from '../helpers/webhooks';

describe('reports: progress in Temporal', function () {
  this.timeout(60_000);

  it("the pending build activity's heartbeat details follow the build's phase within about a second", async () => {
    // its own task queue: the step below is this worker's only
    const config = webhookTestConfig('report-heartbeat');
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const step: AnalysisStep = { name: 'heldStep', run: async () => held.then(() => ({})) };
    const worker = await startWorker({ config, reportSteps: [step] });
    try {
      const { baseUrl } = await startWebhookApp(config);
      const team = await createTeam({ plan: 'premium' });
      const up = await uploadFile('id,name\n1,ann\n2,bob\n', { token: team.adminToken, baseUrl });
      expect(up.status, up.text).to.equal(201);
      const id = up.body.id as string;
      // the build is in the held step (its phase is written to the report row)
      await eventually(
        async () => {
          const res = await call('GET', `/files/${id}/versions/1/report`, {
            token: team.adminToken,
            baseUrl,
          });
          return res.body?.progress?.phase === 'heldStep' ? true : undefined;
        },
        { what: 'the build in its held step', timeoutMs: 20_000 },
      );
      const handle = testEnv().temporal.workflow.getHandle(`report:${id}:v1`);
      const phaseShown = async () => {
        const { raw } = await handle.describe();
        const payload = raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0];
        return payload
          ? (defaultPayloadConverter.fromPayload(payload) as { phase?: string }).phase
          : undefined;
      };
      const shown = await eventually(async () => ((await phaseShown()) === 'heldStep' ? true : undefined), {
        what: "the held step's phase in the heartbeat details",
        timeoutMs: 3_000,
      }).catch(async () => phaseShown());
      expect(shown, 'the phase the heartbeat details show within 3 s').to.equal(true);
    } finally {
      release();
      await worker.stop();
    }
  });
});
