/**
 * The build runner called directly (no worker): what it leaves behind when a build ends early.
 */
import { expect } from 'chai';
import { prepareBuild, runBuild } from '../../domain/reports/build';
import { readResult } from '../../domain/reports/result';
import { Report } from '../../db/models';
import { AnalysisFailure } from '../../domain/reports/engine';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { hiddenSharedStringsWorkbook, uploadFile, xlsx } from '../helpers/files';
import { call } from '../helpers/http';
import { knexThrough, startPgProxy } from '../helpers/pgProxy';

/** A version uploaded through the API whose build is prepared (build 1), for the runner to be called on. */
async function preparedBuild(data: Buffer | string, name?: string) {
  const { knex } = testEnv();
  const team = await createTeam({ plan: 'premium' });
  const up = await uploadFile(data, { token: team.adminToken, ...(name ? { name } : {}) });
  expect(up.status, up.text).to.equal(201);
  const version = await knex('fileVersions').where({ fileId: up.body.id }).first();
  const req = {
    companyId: team.company.id,
    fileId: up.body.id as string,
    fileVersionId: version.id as string,
    version: 1,
  };
  expect(await prepareBuild(knex, req, null)).to.include({ build: 1 });
  return { req, version: version as { id: string; objectKey: string }, team };
}

describe('reports: the build runner', function () {
  this.timeout(30_000);

  it('an extension that fails to prepare ends the build without leaving its heartbeat running', async () => {
    const { knex, storage, config } = testEnv();
    const { req } = await preparedBuild('id,v\n1,a\n');
    // every interval the build starts must be cleared by the time it has ended
    const started = new Set<unknown>();
    const realSet = global.setInterval;
    const realClear = global.clearInterval;
    global.setInterval = ((...args: Parameters<typeof setInterval>) => {
      const handle = realSet(...args);
      started.add(handle);
      return handle;
    }) as typeof setInterval;
    global.clearInterval = ((handle?: Parameters<typeof clearInterval>[0]) => {
      started.delete(handle);
      realClear(handle);
    }) as typeof clearInterval;
    let error: unknown;
    try {
      await runBuild(
        {
          knex,
          storage,
          config,
          extensions: [
            {
              prepare: async () => {
                throw new Error('rules unavailable');
              },
            },
          ],
        },
        req,
        { heartbeat: () => undefined },
      );
    } catch (err) {
      error = err;
    } finally {
      global.setInterval = realSet;
      global.clearInterval = realClear;
    }
    const left = started.size;
    for (const handle of started) realClear(handle as NodeJS.Timeout);
    expect(String(error)).to.include('rules unavailable');
    expect(left, 'intervals left running').to.equal(0);
  });

  it("a workbook whose sheet declares more rows or columns than the limits fails with that limit's reason", async () => {
    const { knex, storage, config } = testEnv();
    // 3 data rows × 3 columns (the sheet's dimension A1:C4)
    const { req } = await preparedBuild(await xlsx(3, 3), 'limits.xlsx');
    // the build runs with lowered limits (the upload was checked against the usual ones)
    async function failure(files: Partial<typeof config.files>): Promise<AnalysisFailure> {
      try {
        await runBuild({ knex, storage, config: { ...config, files: { ...config.files, ...files } } }, req);
      } catch (err) {
        expect(err).to.be.instanceOf(AnalysisFailure);
        return err as AnalysisFailure;
      }
      throw new Error('the build did not fail');
    }
    expect(await failure({ maxRows: 2 })).to.include({
      reason: 'too_many_rows',
      message: 'the sheet has 3 rows; at most 2 are accepted',
    });
    expect(await failure({ maxColumns: 2 })).to.include({
      reason: 'too_many_columns',
      message: 'the sheet has 3 columns; at most 2 are accepted',
    });
    // the zip guards keep their own reason
    expect(await failure({ xlsxMaxEntries: 2 })).to.include({ reason: 'unsafe_workbook' });
  });

  it('a stored workbook with an entry its zip directory does not list fails with unsafe_workbook, unread', async () => {
    const { knex, storage, config } = testEnv();
    const { req, version } = await preparedBuild(await xlsx(3, 3), 'hidden.xlsx');
    // as if stored before the upload checked the layout: hidden shared strings the builds' reader would cache
    const hostile = hiddenSharedStringsWorkbook();
    await storage.client.putObject(storage.bucket, version.objectKey, hostile, hostile.length);
    await knex('fileVersions').where({ id: version.id }).update({ sizeBytes: hostile.length });
    let error: unknown;
    try {
      await runBuild({ knex, storage, config }, req);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(AnalysisFailure);
    expect(error).to.include({ reason: 'unsafe_workbook' });
    expect((error as Error).message).to.match(
      /^the workbook's zip is refused: the local entry xl\/sharedStrings\.xml at byte \d+ is not in its directory$/,
    );
  });
  it('two attempts of one build at once (a retry while the first still runs): the saved result stays', async () => {
    const { knex, storage, config } = testEnv();
    const { req } = await preparedBuild('id,v\n1,a\n2,b\n');
    // every result is an object in MinIO (the wide-sheet case)
    const large = { ...config, reports: { ...config.reports, inlineMaxBytes: 16 } };
    // the second attempt (Temporal's retry after a missed heartbeat, the first still running) is held
    // after its profile until the first has saved the report
    let release!: () => void;
    const first = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    const hold = {
      name: 'testHold',
      run: async () => {
        held = true;
        await first;
        return { passed: true };
      },
    };
    const second = runBuild({ knex, storage, config: large, steps: [hold] }, req);
    second.catch(() => undefined);
    const deadline = Date.now() + 20_000;
    while (!held && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(held, 'the second attempt reached its hold').to.equal(true);
    let outcome: unknown;
    try {
      outcome = await runBuild(
        { knex, storage, config: large, steps: [{ ...hold, run: async () => ({}) }] },
        req,
      );
    } finally {
      release();
    }
    expect(outcome).to.include({ status: 'ready' });
    expect(await second).to.include({ status: 'ready' });
    const report = await Report.query(knex).findOne({ fileVersionId: req.fileVersionId });
    expect(report?.resultObjectKey).to.be.a('string');
    // the report saved by the first attempt still reads its result: the second did not remove it
    const result = await readResult(storage, report!);
    expect(result?.profile.sheets[0].rows).to.equal(2);
    // and the second removed the object it wrote: only the saved one is left
    const left: string[] = [];
    const prefix = storage.key('reports', req.companyId, req.fileId) + '/';
    for await (const item of storage.client.listObjectsV2(storage.bucket, prefix, true) as AsyncIterable<{
      name?: string;
    }>)
      if (item.name) left.push(item.name);
    expect(left).to.deep.equal([report!.resultObjectKey]);
  });

  it('a large result whose save committed although its COMMIT failed keeps its object: the retry finds it ready', async () => {
    const { storage, config } = testEnv();
    const header = Array.from({ length: 20 }, (_, i) => `column_${i}`).join(',');
    const rows = Array.from({ length: 30 }, (_, r) => Array.from({ length: 20 }, (_, c) => r * c).join(','));
    const { req, team } = await preparedBuild(`${header}\n${rows.join('\n')}\n`);
    const small = { ...config, reports: { ...config.reports, inlineMaxBytes: 1024 } };
    const proxy = await startPgProxy(config.databaseUrl);
    const knex = knexThrough(proxy);
    try {
      // the save's transaction (the only one naming the result's object) commits; its answer is lost
      proxy.cutAfterCommit(/"result_object_key"/);
      let error: unknown;
      try {
        await runBuild({ knex, storage, config: small }, req);
      } catch (err) {
        error = err;
      }
      expect(proxy.cuts()).to.equal(1);
      expect(String(error)).to.match(/COMMIT/);
      // the activity's retry
      expect(await runBuild({ knex, storage, config: small }, req)).to.include({ status: 'ready' });
    } finally {
      await knex.destroy();
      await proxy.close();
    }
    const [row] = await testEnv().knex('reports').where({ fileVersionId: req.fileVersionId });
    expect(row).to.include({ status: 'ready', result: null });
    await storage.client.statObject(storage.bucket, row.resultObjectKey as string);
    const res = await call('GET', `/files/${req.fileId}/versions/1/report`, { token: team.adminToken });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.profile.sheets[0]).to.include({ rows: 30, columns: 20 });
  });
});
