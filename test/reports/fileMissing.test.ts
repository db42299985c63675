/**
 * A version whose stored object is gone (removed from the store by hand, say): its report build fails at once
 * with `file_missing`, not after every retry with `internal_error`.
 */
import { expect } from 'chai';
import { startWorker, testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { call } from '../helpers/http';
import { uploadFile, xlsx } from '../helpers/files';
import { eventually } from '../helpers/temporal';
import { startWebhookApp, webhookTestConfig } from '../helpers/webhooks';

describe('reports: a version whose stored object is gone', function () {
  this.timeout(120_000);

  it('a rebuild fails at once with file_missing (CSV and XLSX)', async () => {
    const config = webhookTestConfig('report-missing');
    const worker = await startWorker({ config });
    try {
      const { knex, storage, temporal } = testEnv();
      const { baseUrl } = await startWebhookApp(config);
      const team = await createTeam({ plan: 'premium' });
      for (const [name, data] of [
        ['data.csv', 'id,name\n1,ann\n'],
        ['data.xlsx', await xlsx(3)],
      ] as Array<[string, string | Buffer]>) {
        const up = await uploadFile(data, { token: team.adminToken, name, baseUrl });
        expect(up.status, up.text).to.equal(201);
        const id = up.body.id as string;
        const path = `/files/${id}/versions/1/report`;
        const settled = (build: number) =>
          eventually(
            async () => {
              const res = await call('GET', path, { token: team.adminToken, baseUrl });
              const body = res.body as { build: number; status: string } | undefined;
              return body?.build === build && (body.status === 'ready' || body.status === 'failed')
                ? res.body
                : undefined;
            },
            { what: `build ${build} of ${name}`, timeoutMs: 30_000 },
          );
        expect((await settled(1)).status).to.equal('ready');
        const version = (await knex('fileVersions').where({ fileId: id, version: 1 }).first()) as {
          objectKey: string;
        };
        await storage.client.removeObject(storage.bucket, version.objectKey);
        const rebuild = await call('POST', `${path}/rebuild`, { token: team.adminToken, baseUrl });
        expect(rebuild.status, rebuild.text).to.equal(202);
        const failed = await settled(2);
        expect([failed.status, failed.failure], name).to.deep.equal([
          'failed',
          { reason: 'file_missing', message: 'the stored file of the version is missing' },
        ]);
        // not retried: one attempt
        const history = await temporal.workflow.getHandle(`report:${id}:v1:rebuild-2`).fetchHistory();
        const attempts = (history.events ?? [])
          .map((e) => e.activityTaskStartedEventAttributes?.attempt)
          .filter((a): a is number => typeof a === 'number');
        expect(
          attempts.filter((a) => a > 1),
          name,
        ).to.deep.equal([]);
      }
    } finally {
      await worker.stop();
    }
  });
});
