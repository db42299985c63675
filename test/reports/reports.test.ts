/**
 * Reports end to end against the real services: an upload builds its report in a real worker; the report
 * resource, rebuild (202/409), cancellation when the file is deleted, visibility (404), a file that
 * cannot be analysed. Builds are held mid-way by a test step of the pipeline (a gate per file).
 */
import { readdir } from 'node:fs/promises';
import { expect } from 'chai';
import ExcelJS from 'exceljs';
import { COMPANY_ID } from '../../workflows/shared';
import type { AnalysisStep } from '../../domain/reports/engine';
import { testEnv, startWorker } from '../helpers/env';
import { untilLockWaiters } from '../helpers/locks';
import { createTeam } from '../helpers/factories';
import { call, expectErrorBody } from '../helpers/http';
import { uploadFile, uploadTo, xlsx } from '../helpers/files';
import { eventually } from '../helpers/temporal';

/** Builds of the files named here wait in the pipeline (after the profile) until released. */
const gates = new Map<string, { release: () => void; reached: boolean; promise: Promise<void> }>();
function gate(fileId: string) {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  const g = { release, reached: false, promise };
  gates.set(fileId, g);
  return g;
}
const gateStep: AnalysisStep = {
  name: 'testGate',
  run: async ({ context }) => {
    const g = gates.get(context.fileId);
    if (g) {
      g.reached = true;
      await g.promise;
    }
    return { passed: true };
  },
};

async function report(token: string, path: string) {
  return call('GET', path, { token });
}

async function reportWhen(
  token: string,
  path: string,
  ok: (body: any) => boolean,
  what: string,
  timeoutMs = 60_000,
) {
  return eventually(
    async () => {
      const res = await report(token, path);
      return res.status === 200 && ok(res.body) ? res.body : undefined;
    },
    { what, timeoutMs },
  );
}

const CSV = 'id,price,day\n1,2.5,2024-01-01\n2,3.5,2024-01-02\n3,,2024-01-03\n';

describe('reports: builds, the report resource, rebuilds and cancellation', function () {
  this.timeout(180_000);
  let stop: () => Promise<void>;

  before(async () => {
    // builds wait at the gate only when a test set one for their file
    const worker = await startWorker({ reportSteps: [gateStep] });
    stop = () => worker.stop();
  });
  after(async () => {
    for (const g of gates.values()) g.release();
    await stop();
  });

  it('builds the report of an upload: the profile of the version, and of the newest version', async () => {
    const team = await createTeam({ plan: 'premium' });
    const up = await uploadFile(CSV, { token: team.adminToken, visibility: 'company' });
    expect(up.status, up.text).to.equal(201);
    const id = up.body.id as string;
    const ready = await reportWhen(
      team.employeeToken,
      `/files/${id}/versions/1/report`,
      (b) => b.status === 'ready',
      'a ready report',
    );
    expect(ready).to.include({
      fileId: id,
      version: 1,
      build: 1,
      status: 'ready',
      progress: null,
      failure: null,
    });
    expect(Date.parse(ready.startedAt)).to.be.at.most(Date.parse(ready.finishedAt));
    expect(Date.parse(ready.queuedAt)).to.be.at.most(Date.parse(ready.startedAt));
    const [sheet] = ready.profile.sheets;
    expect(sheet).to.include({ rows: 3, columns: 3, duplicateRows: 0 });
    expect(sheet.columnProfiles.map((c: any) => c.inferredType)).to.deep.equal([
      'integer',
      'decimal',
      'date',
    ]);
    expect(sheet.columnProfiles[1]).to.include({ nulls: 1, min: 2.5, max: 3.5, mean: 3 });
    // the extension steps' sections: this test's gate, and issue 13's quality rules and sensitive data
    expect(ready.sections).to.have.all.keys('testGate', 'quality', 'sensitiveData');
    expect(ready.sections.testGate).to.deep.equal({ passed: true });

    // a second version (XLSX, two sheets): /files/:id/report follows the newest
    const v2 = await uploadTo(`/files/${id}/versions`, await xlsx(4, 3), {
      token: team.adminToken,
      name: 'data.xlsx',
    });
    expect(v2.status, v2.text).to.equal(201);
    const latest = await reportWhen(
      team.adminToken,
      `/files/${id}/report`,
      (b) => b.version === 2 && b.status === 'ready',
      'the report of version 2',
    );
    expect(latest.profile.format).to.equal('xlsx');
    expect(latest.profile.sheets[0]).to.include({ name: 'Data', rows: 4, columns: 3 });
    // version 1's report is unchanged
    expect((await report(team.adminToken, `/files/${id}/versions/1/report`)).body.profile).to.deep.equal(
      ready.profile,
    );
    // the workflow: CompanyId and the upload's correlation id
    const handle = testEnv().temporal.workflow.getHandle(`report:${id}:v1`);
    const description = await handle.describe();
    expect(description.typedSearchAttributes.get(COMPANY_ID)).to.equal(team.company.id);
    expect(description.memo?.correlationId).to.equal(up.headers.get('x-request-id'));
  });

  it('a ragged CSV (trailing cells left out, a cell beyond the header) is accepted, previewed and profiled whole', async () => {
    const team = await createTeam({ plan: 'premium' });
    const up = await uploadFile('id,name,city\n1,Ann\n2,Bob,Oslo\n3,Cy,Rome,extra\n4\n', {
      token: team.adminToken,
      name: 'ragged.csv',
    });
    expect(up.status, up.text).to.equal(201);
    expect(up.body.version).to.include({ format: 'csv', columnCount: 3 });
    const id = up.body.id as string;
    const preview = await call('GET', `/files/${id}/versions/1/preview`, { token: team.adminToken });
    expect(preview.status, preview.text).to.equal(200);
    expect(preview.body.columns).to.deep.equal(['id', 'name', 'city', 'column 4']);
    expect(preview.body.rows).to.deep.equal([
      ['1', 'Ann', null, null],
      ['2', 'Bob', 'Oslo', null],
      ['3', 'Cy', 'Rome', 'extra'],
      ['4', null, null, null],
    ]);
    const ready = await reportWhen(
      team.adminToken,
      `/files/${id}/versions/1/report`,
      (b) => b.status === 'ready',
      "the ragged file's report",
    );
    const [sheet] = ready.profile.sheets;
    expect(sheet).to.include({ rows: 4, columns: 4 });
    expect(sheet.columnProfiles.map((c: any) => [c.name, c.nulls, c.nonNull])).to.deep.equal([
      ['id', 0, 4],
      ['name', 1, 3],
      ['city', 2, 2],
      ['column 4', 3, 1],
    ]);
    expect(sheet.warnings.map((w: any) => [w.code, w.count])).to.deep.include(['rows_wider_than_header', 1]);
  });

  it("a sheet with a title and notes above its table: the header is the table's, the rows above it are counted, not profiled; a plain sheet is read from its first row", async () => {
    const team = await createTeam({ plan: 'premium' });
    const book = new ExcelJS.Workbook();
    const titled = book.addWorksheet('Umsatz');
    titled.getCell('A1').value = 'Sales report Q1 2026';
    titled.getCell('A2').value = 'Region EMEA';
    // row 3 left empty, the table from row 4
    titled.getRow(4).values = ['region', 'sales', 'units'];
    titled.getRow(5).values = ['North', 120.5, 3];
    titled.getRow(6).values = ['South', 80.25, 4];
    titled.getRow(7).values = ['West', 99, 5];
    const plain = book.addWorksheet('Plain');
    plain.getRow(1).values = ['a', 'b'];
    plain.getRow(2).values = [1, 2, 3];
    const up = await uploadFile(Buffer.from(await book.xlsx.writeBuffer()), {
      token: team.adminToken,
      name: 'sales.xlsx',
    });
    expect(up.status, up.text).to.equal(201);
    const id = up.body.id as string;
    const preview = await call('GET', `/files/${id}/versions/1/preview`, { token: team.adminToken });
    expect(preview.status, preview.text).to.equal(200);
    expect(preview.body.columns).to.deep.equal(['region', 'sales', 'units']);
    expect(preview.body.rows).to.deep.equal([
      ['North', 120.5, 3],
      ['South', 80.25, 4],
      ['West', 99, 5],
    ]);
    const second = await call('GET', `/files/${id}/versions/1/preview?sheet=Plain`, {
      token: team.adminToken,
    });
    expect(second.body.columns).to.deep.equal(['a', 'b', 'column 3']);
    const ready = await reportWhen(
      team.adminToken,
      `/files/${id}/versions/1/report`,
      (b) => b.status === 'ready',
      "the titled workbook's report",
    );
    const [sheet, other] = ready.profile.sheets;
    expect(sheet).to.include({ name: 'Umsatz', rows: 3, columns: 3, blankRows: 0 });
    expect(sheet.columnProfiles.map((c: any) => [c.name, c.inferredType])).to.deep.equal([
      ['region', 'text'],
      ['sales', 'decimal'],
      ['units', 'integer'],
    ]);
    expect(sheet.columnProfiles[1]).to.include({ min: 80.25, max: 120.5 });
    expect(sheet.warnings).to.deep.include({
      code: 'lines_before_header',
      count: 2,
      message: '2 row(s) above the header (a title or notes) are not part of the table',
    });
    // a header narrower than its row is still the header (no title: the rule takes nothing away)
    expect(other).to.include({ name: 'Plain', rows: 1, columns: 3 });
    expect(other.warnings.map((w: any) => w.code)).to.not.include('lines_before_header');
  });

  it('shows progress while building; a rebuild gives 409 while one is queued or building, else 202 and a new build', async () => {
    const team = await createTeam({ plan: 'premium' });
    const rows = Array.from({ length: 2000 }, (_, i) => `${i},${i % 7},x${i % 13}`).join('\n');
    const content = `a,b,c\n${rows}\n`;
    const up = await uploadFile(content, { token: team.adminToken });
    const id = up.body.id as string;
    const g = gate(id);
    const path = `/files/${id}/versions/1/report`;
    const building = await reportWhen(
      team.adminToken,
      path,
      (b) => b.status === 'building' && b.progress?.phase === 'testGate',
      'a build held at the gate',
    );
    expect(building.progress).to.deep.equal({
      rowsRead: 2000,
      bytesRead: Buffer.byteLength(content),
      bytesTotal: Buffer.byteLength(content),
      phase: 'testGate',
    });
    expect(building.profile).to.equal(null);
    const conflict = await call('POST', `${path}/rebuild`, { token: team.adminToken });
    expectErrorBody(conflict, 409);
    g.release();
    gates.delete(id);
    await reportWhen(team.adminToken, path, (b) => b.status === 'ready', 'the first build ready');

    const g2 = gate(id);
    const keyed = { token: team.adminToken, headers: { 'idempotency-key': `rebuild-${id}` } };
    const rebuild = await call('POST', `${path}/rebuild`, keyed);
    expect(rebuild.status, rebuild.text).to.equal(202);
    expect(rebuild.body).to.include({ status: 'queued', build: 2, profile: null });
    expect(rebuild.headers.get('location')).to.equal(path);
    // a retry with the same Idempotency-Key (a lost answer) replays the first answer: no 409, no third build
    const replay = await call('POST', `${path}/rebuild`, keyed);
    expect(replay.status, replay.text).to.equal(202);
    expect(replay.body).to.deep.equal(rebuild.body);
    // queued or building: 409
    expectErrorBody(await call('POST', `${path}/rebuild`, { token: team.adminToken }), 409);
    await reportWhen(team.adminToken, path, (b) => b.status === 'building', 'build 2 building');
    expectErrorBody(await call('POST', `${path}/rebuild`, { token: team.adminToken }), 409);
    g2.release();
    gates.delete(id);
    const rebuilt = await reportWhen(
      team.adminToken,
      path,
      (b) => b.status === 'ready' && b.build === 2,
      'build 2',
    );
    expect(rebuilt.profile.sheets[0].rows).to.equal(2000);
    const handle = testEnv().temporal.workflow.getHandle(`report:${id}:v1:rebuild-2`);
    expect(await handle.result()).to.deep.equal({ status: 'ready' });
    const description = await handle.describe();
    expect(description.typedSearchAttributes.get(COMPANY_ID)).to.equal(team.company.id);
    // one report.ready per build
    const events = await testEnv()
      .knex('outbox')
      .where({ type: 'report.ready' })
      .whereRaw(`data->>'fileId' = ?`, [id]);
    expect(events.map((e: any) => [e.data.reportStatus, e.data.version])).to.deep.equal([
      ['ready', 1],
      ['ready', 1],
    ]);
    expect(new Set(events.map((e: any) => e.data.reportId)).size).to.equal(1);
  });

  it('a file deleted in the middle of a build cancels it and leaves nothing behind', async () => {
    const team = await createTeam({ plan: 'premium' });
    const up = await uploadFile(CSV, { token: team.adminToken });
    const id = up.body.id as string;
    gate(id);
    await reportWhen(
      team.adminToken,
      `/files/${id}/versions/1/report`,
      (b) => b.status === 'building' && b.progress?.phase === 'testGate',
      'a build held at the gate',
    );
    // while held, the build has its temporary folder (named after the file and version)
    const folders = await readdir(testEnv().config.reports.workDir);
    expect(folders.filter((f) => f.startsWith(`build-${id}-v1-b1-`))).to.have.length(1);
    const deleted = await call('DELETE', `/files/${id}`, { token: team.adminToken });
    expect(deleted.status, deleted.text).to.equal(204);
    const { temporal, knex, storage, config } = testEnv();
    const handle = temporal.workflow.getHandle(`report:${id}:v1`);
    await eventually(async () => (await handle.describe()).status.name === 'CANCELLED', {
      what: 'the build cancelled',
      timeoutMs: 30_000,
    });
    expect(await knex('reports').where({ fileId: id })).to.deep.equal([]);
    const events = await knex('outbox').whereRaw(`data->>'fileId' = ?`, [id]).select('type');
    expect(events.map((e: any) => e.type)).to.deep.equal(['file.uploaded']);
    const keys: string[] = [];
    const listing = storage.client.listObjectsV2(storage.bucket, `${config.s3.prefix}reports/`, true);
    for await (const item of listing as AsyncIterable<{ name?: string }>)
      if (item.name?.includes(id)) keys.push(item.name);
    expect(keys).to.deep.equal([]);
    // the build's temporary folder is gone once the activity has stopped (other files' builds, left on this run's
    // task queue by earlier test files, may be running beside it: only this file's folder counts)
    await eventually(
      async () => {
        const left = await readdir(config.reports.workDir).catch(() => [] as string[]);
        return left.filter((f) => f.startsWith(`build-${id}-`)).length === 0;
      },
      { what: `no build folder left in ${config.reports.workDir}`, timeoutMs: 25_000 },
    );
    expectErrorBody(await call('GET', `/files/${id}/report`, { token: team.adminToken }), 404);
  });

  it('a rebuild asked for while the file is being deleted: 404, not 409', async () => {
    const { knex } = testEnv();
    const team = await createTeam({ plan: 'premium' });
    const up = await uploadFile(CSV, { token: team.adminToken });
    const id = up.body.id as string;
    const path = `/files/${id}/versions/1/report`;
    await reportWhen(team.adminToken, path, (b) => b.status === 'ready', 'the first build ready');
    // the delete as DELETE /files/{id} makes it (the file locked, its rows removed), held open while the
    // rebuild is asked for: the request finds the version, then waits on the report row the delete took
    const trx = await knex.transaction();
    let asked: ReturnType<typeof call> | undefined;
    try {
      await trx('files').where({ id }).forUpdate().first();
      await trx('files').where({ id }).delete();
      let answered = false;
      asked = call('POST', `${path}/rebuild`, { token: team.adminToken }).then((r) => ((answered = true), r));
      await untilLockWaiters(knex, 1, () => answered);
      await trx.commit();
    } catch (err) {
      await trx.rollback();
      throw err;
    }
    // not "a report of this version is already being built": there is no version any more
    expectErrorBody(await asked!, 404);
  });

  it("another company's caller and an employee without sight of a private file get 404", async () => {
    const team = await createTeam({ plan: 'premium' });
    const other = await createTeam({ plan: 'premium' });
    const up = await uploadFile(CSV, { token: team.adminToken }); // private to its uploader (and admins)
    const id = up.body.id as string;
    await reportWhen(team.adminToken, `/files/${id}/report`, (b) => b.status === 'ready', 'ready');
    for (const token of [other.adminToken, other.employeeToken, team.employeeToken]) {
      expectErrorBody(await call('GET', `/files/${id}/report`, { token }), 404);
      expectErrorBody(await call('GET', `/files/${id}/versions/1/report`, { token }), 404);
      expectErrorBody(await call('POST', `/files/${id}/versions/1/report/rebuild`, { token }), 404);
    }
    expectErrorBody(await call('GET', `/files/${id}/versions/2/report`, { token: team.adminToken }), 404);
  });

  it('a file that cannot be analysed fails at once with a reason code, never a cell value', async () => {
    const team = await createTeam({ plan: 'premium' });
    // accepted by the upload (the unterminated quote is on the last line), unreadable as a table
    const up = await uploadFile('a,b\n1,2\n3,"secret-value\n', { token: team.adminToken });
    expect(up.status, up.text).to.equal(201);
    const id = up.body.id as string;
    const failed = await reportWhen(
      team.adminToken,
      `/files/${id}/report`,
      (b) => b.status === 'failed',
      'failed',
    );
    expect(failed.failure.reason).to.equal('unparsable_file');
    expect(JSON.stringify(failed)).not.to.include('secret-value');
    expect(failed.profile).to.equal(null);
    // not retried: one attempt of the build activity
    const history = await testEnv().temporal.workflow.getHandle(`report:${id}:v1`).fetchHistory();
    const scheduled = (history.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'buildReport',
    );
    const started = (history.events ?? []).filter((e) => e.activityTaskStartedEventAttributes);
    expect(scheduled).to.have.length(1);
    expect(started.some((e) => Number(e.activityTaskStartedEventAttributes?.attempt) > 1)).to.equal(false);
    const events = await testEnv()
      .knex('outbox')
      .whereIn('type', ['report.ready', 'report.failed'])
      .whereRaw(`data->>'fileId' = ?`, [id]);
    expect(events.map((e: any) => [e.type, e.data])).to.deep.equal([
      ['report.failed', { fileId: id, reportStatus: 'failed', version: 1, reportId: failed.reportId }],
    ]);
  });
});
