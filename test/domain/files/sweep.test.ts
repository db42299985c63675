import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startMissingAnalyses } from '../../../domain/files/reportStarts';
import { sweepOrphanObjects } from '../../../domain/files/sweep';
import { actingAs } from '../../../db/unitOfWork';
import { uuidv7 } from '../../../common/ids';
import { startWorker, testEnv } from '../../helpers/env';
import { ensureFileOrphanSweepSchedule } from '../../../worker/worker';
import { fileOrphanSweepWorkflow } from '../../../workflows/fileOrphanSweep';
import { workflowIdentity } from '../../../workflows/shared';
import { createTeam } from '../../helpers/factories';
import { call } from '../../helpers/http';
import { eventually } from '../../helpers/temporal';
import { csv, objectsOf, uploadFile, uploadTo } from '../../helpers/files';

describe('orphan sweep (real MinIO and PostgreSQL)', function () {
  this.timeout(30_000);

  it('removes objects of versions that never committed, keeps committed ones', async () => {
    const { knex, storage } = testEnv();
    const a = await createTeam({ plan: 'premium' });
    const saved = await uploadFile(csv(2), { token: a.adminToken });
    expect(saved.status).to.equal(201);
    // what a crash between the upload and the commit leaves: an object whose version id has no row
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

  it('removes large report results no report names (a deleted file’s, a replaced one), keeps the one named', async () => {
    const { knex, storage } = testEnv();
    const a = await createTeam({ plan: 'premium' });
    const kept = await uploadFile(csv(2), { token: a.adminToken });
    const gone = await uploadFile(csv(3), { token: a.adminToken });
    const version = await knex('fileVersions').where({ fileId: kept.body.id }).first();
    const reportId = randomUUID();
    // as builds name them (`-<attempt>`), and as they did before attempts were named
    const resultKey = (fileId: string, id: string, build: number, attempt = '') =>
      storage.key('reports', a.company.id, fileId, `${id}-b${build}${attempt}.json`);
    // a ready report whose result lives in MinIO, its build 1 a rebuild replaced, and another attempt of
    // build 2 that did not save
    const named = resultKey(kept.body.id, reportId, 2, '-0a1b2c3d');
    const replaced = resultKey(kept.body.id, reportId, 1);
    const otherAttempt = resultKey(kept.body.id, reportId, 2, '-9f8e7d6c');
    await knex('reports').insert({
      id: reportId,
      companyId: a.company.id,
      fileId: kept.body.id,
      fileVersionId: version.id,
      version: 1,
      status: 'ready',
      build: 2,
      resultObjectKey: named,
    });
    // what a delete leaves when MinIO fails after its commit: the rows are gone, the result object is not
    const deleted = resultKey(gone.body.id, randomUUID(), 1);
    expect((await call('DELETE', `/files/${gone.body.id}`, { token: a.adminToken })).status).to.equal(204);
    const json = Buffer.from('{"profile":{}}');
    for (const key of [named, replaced, otherAttempt, deleted])
      await storage.client.putObject(storage.bucket, key, json);
    const results = async () => {
      const names: string[] = [];
      const listing = storage.client.listObjectsV2(
        storage.bucket,
        storage.key('reports', a.company.id) + '/',
        true,
      );
      for await (const item of listing as AsyncIterable<{ name?: string }>)
        if (item.name) names.push(item.name);
      return names.sort();
    };
    // as the worker runs it: the application role, as the system task file-sweep (row-level security)
    const sweep = (options: { now?: number } = {}) =>
      actingAs({ system: 'file-sweep' }, () => sweepOrphanObjects(testEnv().appKnex, storage, options));
    // young objects are left alone (a build writes its result just before saving the row that names it)
    await sweep();
    expect(await results()).to.deep.equal([named, replaced, otherAttempt, deleted].sort());
    const swept = await sweep({ now: Date.now() + 2 * 3600_000 });
    expect(swept.objectsRemoved).to.be.at.least(3);
    expect(await results()).to.deep.equal([named]);
  });

  it('starts the report workflow again for a version left without a report (its start after upload failed)', async () => {
    const { temporal, knex, config } = testEnv();
    const a = await createTeam({ plan: 'premium' });
    const saved = await uploadFile(csv(2), { token: a.adminToken });
    expect(saved.status).to.equal(201);
    const id = `report:${saved.body.id}:v1`;
    // no worker polls here, so the started workflow waits; end it as if the start had never happened.
    // The start after commit is not awaited by the upload: wait until it exists before ending it.
    await eventually(
      async () =>
        temporal.workflow
          .getHandle(id)
          .describe()
          .then(() => true)
          .catch(() => false),
      { what: `workflow ${id} started after the upload` },
    );
    await temporal.workflow.getHandle(id).terminate('test: the start after upload failed');
    expect(await knex('reports').where({ fileId: saved.body.id })).to.have.lengthOf(0);

    // a young version is left alone (its start may still be on its way)
    await startMissingAnalyses(knex, temporal, config.temporal.taskQueue);
    expect((await temporal.workflow.getHandle(id).describe()).status.name).to.equal('TERMINATED');

    const later = Date.now() + 10 * 60_000;
    const first = await startMissingAnalyses(knex, temporal, config.temporal.taskQueue, { now: later });
    expect(first.reportsStarted).to.be.at.least(1);
    const restarted = await temporal.workflow.getHandle(id).describe();
    expect(restarted.status.name).to.equal('RUNNING');
    expect(restarted.type).to.equal('reportWorkflow');
    // idempotent: a workflow already running is not started twice
    const second = await startMissingAnalyses(knex, temporal, config.temporal.taskQueue, { now: later });
    expect(second.reportsStarted).to.equal(0);
    expect(second.reportsRunning).to.be.at.least(1);
    await temporal.workflow.getHandle(id).terminate('test done');
  });

  it('starts the automatic comparison again for a new version left without one (its start after upload failed)', async () => {
    const { temporal, knex, config } = testEnv();
    const a = await createTeam({ plan: 'premium' });
    const saved = await uploadFile(csv(2), { token: a.adminToken });
    expect(saved.status).to.equal(201);
    const second = await uploadTo(`/files/${saved.body.id}/versions`, csv(3), { token: a.adminToken });
    expect(second.status).to.equal(201);
    const id = `comparison:${saved.body.id}:v1:v2`;
    const started = (wid: string) =>
      temporal.workflow
        .getHandle(wid)
        .describe()
        .then(() => true)
        .catch(() => false);
    // no worker polls here: end the started workflows as if their starts after upload had never happened
    for (const wid of [id, `report:${saved.body.id}:v1`, `report:${saved.body.id}:v2`]) {
      await eventually(() => started(wid), { what: `workflow ${wid} started after the upload` });
      await temporal.workflow.getHandle(wid).terminate('test: the start after upload failed');
    }
    expect(await knex('comparisons').where({ fileId: saved.body.id })).to.have.lengthOf(0);

    // a young version is left alone (its start may still be on its way)
    await startMissingAnalyses(knex, temporal, config.temporal.taskQueue);
    expect((await temporal.workflow.getHandle(id).describe()).status.name).to.equal('TERMINATED');

    const later = Date.now() + 10 * 60_000;
    const first = await startMissingAnalyses(knex, temporal, config.temporal.taskQueue, { now: later });
    expect(first.comparisonsStarted).to.be.at.least(1);
    const restarted = await temporal.workflow.getHandle(id).describe();
    expect(restarted.status.name).to.equal('RUNNING');
    expect(restarted.type).to.equal('comparisonWorkflow');
    // idempotent: a workflow already running is not started twice
    const again = await startMissingAnalyses(knex, temporal, config.temporal.taskQueue, { now: later });
    expect(again.comparisonsStarted).to.equal(0);
    expect(again.comparisonsRunning).to.be.at.least(1);
    for (const wid of [id, `report:${saved.body.id}:v1`, `report:${saved.body.id}:v2`]) {
      await temporal.workflow
        .getHandle(wid)
        .terminate('test done')
        .catch(() => undefined);
    }
  });

  it('starts again a rebuild and a requested comparison still queued after their starts after commit failed', async () => {
    const { temporal, knex, config } = testEnv();
    const a = await createTeam({ plan: 'premium' });
    const saved = await uploadFile(csv(2), { token: a.adminToken });
    expect(saved.status).to.equal(201);
    const fileId = saved.body.id as string;
    expect((await uploadTo(`/files/${fileId}/versions`, csv(3), { token: a.adminToken })).status).to.equal(
      201,
    );
    const exists = (wid: string) =>
      temporal.workflow
        .getHandle(wid)
        .describe()
        .then(() => true)
        .catch(() => false);
    /** no worker polls here: a started workflow waits; end it as if its start had never happened */
    const lose = async (wid: string) => {
      await eventually(() => exists(wid), { what: `workflow ${wid} started` });
      await temporal.workflow.getHandle(wid).terminate('test: the start after commit failed');
    };
    for (const wid of [`report:${fileId}:v1`, `report:${fileId}:v2`, `comparison:${fileId}:v1:v2`])
      await lose(wid);
    // version 1's first build is over (a worker would have finished it), so a rebuild may be asked for
    const v1 = (await knex('fileVersions').where({ fileId, version: 1 }).first()) as { id: string };
    await knex('reports').insert({
      id: uuidv7(),
      companyId: a.company.id,
      fileId,
      fileVersionId: v1.id,
      version: 1,
      status: 'ready',
      finishedAt: new Date(),
    });
    const rebuild = await call('POST', `/files/${fileId}/versions/1/report/rebuild`, {
      token: a.adminToken,
      json: {},
    });
    expect(rebuild.status).to.equal(202);
    const rebuildId = `report:${fileId}:v1:rebuild-2`;
    await lose(rebuildId);
    const requested = await call('POST', '/comparisons', {
      token: a.adminToken,
      json: { base: { fileId, version: 1 }, target: { fileId, version: 2 } },
    });
    expect(requested.status).to.equal(202);
    const comparisonId = `comparison:${fileId}:v1:v2:${requested.body.id}`;
    await lose(comparisonId);
    expect((await knex('reports').where({ fileVersionId: v1.id }).first()).status).to.equal('queued');
    expect((await knex('comparisons').where({ id: requested.body.id }).first()).status).to.equal('queued');

    // young rows are left alone (their starts may still be on their way)
    const now = await startMissingAnalyses(knex, temporal, config.temporal.taskQueue);
    expect(now.rebuildsStarted + now.requestedComparisonsStarted).to.equal(0);
    expect((await temporal.workflow.getHandle(rebuildId).describe()).status.name).to.equal('TERMINATED');

    const later = Date.now() + 10 * 60_000;
    const first = await startMissingAnalyses(knex, temporal, config.temporal.taskQueue, { now: later });
    expect(first.rebuildsStarted).to.be.at.least(1);
    expect(first.requestedComparisonsStarted).to.be.at.least(1);
    const rebuilt = await temporal.workflow.getHandle(rebuildId).describe();
    expect(rebuilt.status.name).to.equal('RUNNING');
    expect(rebuilt.type).to.equal('reportWorkflow');
    expect(rebuilt.searchAttributes.CompanyId).to.deep.equal([a.company.id]);
    const compared = await temporal.workflow.getHandle(comparisonId).describe();
    expect(compared.status.name).to.equal('RUNNING');
    expect(compared.type).to.equal('comparisonWorkflow');
    // idempotent: workflows already running are not started twice
    const again = await startMissingAnalyses(knex, temporal, config.temporal.taskQueue, { now: later });
    expect(again.rebuildsStarted + again.requestedComparisonsStarted).to.equal(0);
    expect(again.rebuildsRunning).to.be.at.least(1);
    expect(again.requestedComparisonsRunning).to.be.at.least(1);
    for (const wid of [rebuildId, comparisonId]) {
      await temporal.workflow
        .getHandle(wid)
        .terminate('test done')
        .catch(() => undefined);
    }
  });

  it('runs as the hourly Temporal Schedule retention:file-orphans:<task queue>, created idempotently', async () => {
    const { knex, storage, temporal, config } = testEnv();
    // its own worker, stopped at the end: a worker left polling this run's task queue would take other tests' tasks
    const worker = await startWorker();
    const a = await createTeam({ plan: 'premium' });
    const orphanKey = storage.key('files', a.company.id, uuidv7(), uuidv7());
    await storage.client.putObject(storage.bucket, orphanKey, Buffer.from('a,b\n1,2\n'));
    const result = await temporal.workflow
      .execute(fileOrphanSweepWorkflow, {
        ...workflowIdentity({
          kind: 'retention',
          parts: ['file-orphans-test', uuidv7()],
          companyId: '_system',
          taskQueue: config.temporal.taskQueue,
        }),
        args: [{ olderThanMs: 0 }],
      })
      .finally(() => worker.stop());
    expect(result.objectsRemoved).to.be.at.least(1);
    expect(await objectsOf(a.company.id)).to.deep.equal([]);
    expect(await knex('fileVersions').where({ objectKey: orphanKey })).to.have.lengthOf(0);

    const id = await ensureFileOrphanSweepSchedule(temporal, config);
    expect(await ensureFileOrphanSweepSchedule(temporal, config)).to.equal(id);
    expect(id).to.equal(`retention:file-orphans:${config.temporal.taskQueue}`);
    const handle = temporal.schedule.getHandle(id);
    try {
      const description = await handle.describe();
      expect((description.action as { workflowType: string }).workflowType).to.equal(
        'fileOrphanSweepWorkflow',
      );
      expect(description.spec.intervals?.[0]?.every).to.equal(3600_000);
    } finally {
      await handle.delete();
    }
  });
});
