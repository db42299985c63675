import { expect } from 'chai';
import { sweepOrphanObjects } from '../../common/files/sweep';
import { uuidv7 } from '../../common/ids';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { csv, objectsOf, uploadFile } from '../helpers/files';

describe('orphan sweep (real MinIO and PostgreSQL)', function () {
  this.timeout(30_000);

  it('removes objects of versions that never committed, keeps committed ones', async () => {
    const { knex, storage } = testEnv();
    const a = await createTeam({ plan: 'premium' });
    const saved = await uploadFile(csv(2), { token: a.adminToken });
    expect(saved.status).to.equal(201);
    // what a crash between the upload and the commit leaves: an object and an unfinished multipart upload
    const orphanKey = storage.key('files', a.company.id, uuidv7(), uuidv7());
    await storage.client.putObject(storage.bucket, orphanKey, Buffer.from('a,b\n1,2\n'));
    expect(await objectsOf(a.company.id)).to.have.lengthOf(2);

    // uploads in progress (younger than the grace period) are left alone
    expect(await sweepOrphanObjects(knex, storage)).to.deep.equal({ objectsRemoved: 0, uploadsAborted: 0 });
    const later = Date.now() + 2 * 3600_000;
    const result = await sweepOrphanObjects(knex, storage, { now: later });
    expect(result.objectsRemoved).to.be.at.least(1);
    const left = await objectsOf(a.company.id);
    expect(left).to.have.lengthOf(1);
    const version = await knex('fileVersions').where({ fileId: saved.body.id }).first();
    expect(left[0]).to.equal(version.objectKey);
  });
});
