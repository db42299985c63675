/**
 * dataset.changed and dataset.schema_changed reach a real webhook receiver once per new version, and nothing
 * is sent for a version equal to its predecessor or for a requested comparison.
 */
import { expect } from 'chai';
import { call } from '../helpers/http';
import { uploadFile, uploadTo } from '../helpers/files';
import { eventually } from '../helpers/temporal';
import { finishedDeliveries, startEventsReceiver, stopOtherDispatchers } from '../helpers/webhooks';

describe('comparisons: events to a receiver', function () {
  this.timeout(180_000);

  before(async () => {
    await stopOtherDispatchers();
  });

  it('one dataset.changed / dataset.schema_changed per new version; none when nothing differs', async () => {
    const { running, baseUrl, team, receiver, endpoint } = await startEventsReceiver('compare-events', [
      'dataset.changed',
      'dataset.schema_changed',
    ]);
    try {
      const token = team.adminToken;
      const ready = (id: string, v: number) =>
        eventually(
          async () => {
            const res = await call('GET', `/files/${id}/versions/${v}/comparison`, { token, baseUrl });
            return res.body?.status === 'ready' ? res.body : undefined;
          },
          { what: `v${v} compared`, timeoutMs: 60_000 },
        );
      const up = await uploadFile('id,a,b\n1,x,1\n2,y,2\n', { token, baseUrl });
      const id = up.body.id as string;
      // v2: a row changed and column b retyped (integer → text)
      await uploadTo(`/files/${id}/versions`, 'id,a,b\n1,x,one\n2,y,2\n', { token, baseUrl });
      await ready(id, 2);
      // v3: the same rows: no event
      await uploadTo(`/files/${id}/versions`, 'b,a,id\n2,y,2\none,x,1\n', { token, baseUrl });
      await ready(id, 3);
      // v4: a row added only (no column removed or retyped): dataset.changed alone
      await uploadTo(`/files/${id}/versions`, 'b,a,id\n2,y,2\none,x,1\nthree,z,3\n', { token, baseUrl });
      await ready(id, 4);
      // a requested comparison sends nothing
      const req = await call('POST', '/comparisons', {
        token,
        baseUrl,
        json: { base: { fileId: id, version: 1 }, target: { fileId: id, version: 4 } },
      });
      expect(req.status, req.text).to.equal(202);
      await eventually(
        async () =>
          (await call('GET', `/comparisons/${req.body.id}`, { token, baseUrl })).body?.status === 'ready'
            ? true
            : undefined,
        { what: 'requested comparison', timeoutMs: 60_000 },
      );
      const deliveries = await finishedDeliveries(endpoint.id, 3, 90_000);
      expect(deliveries.every((d) => d.status === 'succeeded')).to.equal(true);
      const got = receiver.requests.map((r) => [r.body.type, r.body.data.version, r.verifiedWith]);
      expect(got).to.have.deep.members([
        ['dataset.changed', 2, 0],
        ['dataset.schema_changed', 2, 0],
        ['dataset.changed', 4, 0],
      ]);
      const changed = receiver.requests.find((r) => r.body.data.version === 4)!;
      expect(changed.body.data).to.deep.include({
        fileId: id,
        version: 4,
        previousVersion: 3,
        added: 1,
        removed: 0,
        changed: 0,
        unchanged: 2,
      });
      const schema = receiver.requests.find((r) => r.body.type === 'dataset.schema_changed')!;
      expect(schema.body.data).to.deep.include({
        columnsAdded: [],
        columnsRemoved: [],
        typeChanges: [{ column: 'b', from: 'integer', to: 'text' }],
      });
      expect(receiver.requests.map((r) => r.rawBody).join('')).not.to.match(/"one"|"three"/);
    } finally {
      await running.stop();
    }
  });
});
