import { expect } from 'chai';
import { startWorker, testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { call } from '../helpers/http';
import { uploadFile } from '../helpers/files';
import { eventually } from '../helpers/temporal';
import { startWebhookApp, webhookTestConfig } from '../helpers/webhooks';

async function exists(key: string): Promise<boolean> {
  const { storage } = testEnv();
  try {
    await storage.client.statObject(storage.bucket, key);
    return true;
  } catch {
    return false;
  }
}

describe('reports: a result over REPORT_INLINE_MAX_BYTES lives in MinIO', function () {
  this.timeout(120_000);

  it('is stored as an object, read back by the GET, replaced by a rebuild and removed with the file', async () => {
    const config = webhookTestConfig('report-large', { REPORT_INLINE_MAX_BYTES: '1024' });
    const worker = await startWorker({ config });
    try {
      const { baseUrl } = await startWebhookApp(config);
      const team = await createTeam({ plan: 'premium' });
      const header = Array.from({ length: 20 }, (_, i) => `column_${i}`).join(',');
      const rows = Array.from({ length: 30 }, (_, r) =>
        Array.from({ length: 20 }, (_, c) => r * c).join(','),
      );
      const up = await uploadFile(`${header}\n${rows.join('\n')}\n`, { token: team.adminToken, baseUrl });
      const id = up.body.id as string;
      const path = `/files/${id}/versions/1/report`;
      const ready = await eventually(
        async () => {
          const res = await call('GET', path, { token: team.adminToken, baseUrl });
          return res.body?.status === 'ready' ? res.body : undefined;
        },
        { what: 'ready', timeoutMs: 60_000 },
      );
      expect(ready.profile.sheets[0]).to.include({ rows: 30, columns: 20 });
      expect(ready.profile.sheets[0].columnProfiles[19]).to.include({ name: 'column_19', max: 29 * 19 });
      const [row] = await testEnv().knex('reports').where({ fileId: id });
      expect(row.result).to.equal(null);
      expect(row.resultObjectKey).to.match(
        new RegExp(`reports/${team.company.id}/${id}/.+-b1-[0-9a-f]{8}\\.json$`),
      );
      expect(row.resultBytes).to.be.greaterThan(1024);
      expect(await exists(row.resultObjectKey)).to.equal(true);

      const rebuild = await call('POST', `${path}/rebuild`, { token: team.adminToken, baseUrl });
      expect(rebuild.status, rebuild.text).to.equal(202);
      expect(await exists(row.resultObjectKey)).to.equal(false);
      await eventually(
        async () => (await call('GET', path, { token: team.adminToken, baseUrl })).body?.status === 'ready',
        { what: 'rebuilt', timeoutMs: 60_000 },
      );
      const [after] = await testEnv().knex('reports').where({ fileId: id });
      expect(after.resultObjectKey).to.match(/-b2-[0-9a-f]{8}\.json$/);
      expect((await call('DELETE', `/files/${id}`, { token: team.adminToken, baseUrl })).status).to.equal(
        204,
      );
      expect(await exists(after.resultObjectKey)).to.equal(false);
    } finally {
      await worker.stop();
    }
  });
});
