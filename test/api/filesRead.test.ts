import { expect } from 'chai';
import ExcelJS from 'exceljs';
import { loadConfig } from '../../common/config';
import { downloadLink } from '../../domain/files/downloads';
import { COMPANY_ID } from '../../workflows/shared';
import { call, expectErrorBody } from '../helpers/http';
import { startWorker, testEnv } from '../helpers/env';
import { createApiKey, createTeam } from '../helpers/factories';
import { eventually } from '../helpers/temporal';
import { csv, expectHiddenFrom, uploadFile, uploadTo, xlsx } from '../helpers/files';

describe('files: previews, download links and the report hook', function () {
  this.timeout(90_000);

  it('previews a CSV: header as columns, the first rows, bounded by ?rows', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const up = await uploadFile('name;amount\n"Smith; J";10\nLee;20\nKim;30\n', { token: a.adminToken });
    const res = await call('GET', `/files/${up.body.id}/versions/1/preview?rows=2`, { token: a.adminToken });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({
      fileId: up.body.id,
      version: 1,
      format: 'csv',
      columns: ['name', 'amount'],
      rows: [
        ['Smith; J', '10'],
        ['Lee', '20'],
      ],
      moreRows: true,
      moreColumns: false,
      sheet: null,
      sheets: null,
    });
    const all = await call('GET', `/files/${up.body.id}/versions/1/preview`, { token: a.adminToken });
    expect(all.body.rows).to.have.lengthOf(3);
    expect(all.body.moreRows).to.equal(false);
    expectErrorBody(
      await call('GET', `/files/${up.body.id}/versions/1/preview?rows=101`, { token: a.adminToken }),
      400,
    );
    expectErrorBody(
      await call('GET', `/files/${up.body.id}/versions/1/preview`, { token: b.adminToken }),
      404,
    );
  });

  it('previews an XLSX (first worksheet) and a TSV, columns capped at 100', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('First');
    sheet.addRow(['city', 'population', 'founded', 'capital']);
    sheet.addRow(['Lyon', 522_000, new Date(Date.UTC(1900, 0, 1)), false]);
    sheet.addRow(['Nice', { formula: '340000+1', result: 340_001 }, null, true]);
    workbook.addWorksheet('Second').addRow(['ignored']);
    const third = workbook.addWorksheet('R&D <2026>');
    third.addRow(['project', 'budget']);
    third.addRow(['atlas', 12]);
    const up = await uploadFile(Buffer.from(await workbook.xlsx.writeBuffer()), {
      token: a.adminToken,
      name: 'cities.xlsx',
    });
    expect(up.status, up.text).to.equal(201);
    const res = await call('GET', `/files/${up.body.id}/versions/1/preview`, { token: a.adminToken });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.format).to.equal('xlsx');
    expect(res.body.columns).to.deep.equal(['city', 'population', 'founded', 'capital']);
    expect(res.body.rows).to.deep.equal([
      ['Lyon', 522000, '1900-01-01T00:00:00.000Z', false],
      ['Nice', 340001, null, true],
    ]);
    expect(res.body).to.include({ sheet: 'First' });
    expect(res.body.sheets).to.deep.equal(['First', 'Second', 'R&D <2026>']);

    // another worksheet by its name (names with markup characters included); an unknown name is 400
    const other = await call(
      'GET',
      `/files/${up.body.id}/versions/1/preview?sheet=${encodeURIComponent('R&D <2026>')}`,
      { token: a.adminToken },
    );
    expect(other.status, other.text).to.equal(200);
    expect(other.body).to.deep.include({
      sheet: 'R&D <2026>',
      columns: ['project', 'budget'],
      rows: [['atlas', 12]],
      moreRows: false,
    });
    expect(
      expectErrorBody(
        await call('GET', `/files/${up.body.id}/versions/1/preview?sheet=Third`, { token: a.adminToken }),
        400,
      ).message,
    ).to.equal(
      'query.sheet: the workbook has no sheet named "Third" (its sheets: "First", "Second", "R&D <2026>")',
    );

    const wide = await uploadFile(csv(2, 120).replace(/,/g, '\t'), { token: a.adminToken, name: 'wide.tsv' });
    expect(wide.body.version.format).to.equal('tsv');
    const widePreview = await call('GET', `/files/${wide.body.id}/versions/1/preview?rows=1`, {
      token: a.adminToken,
    });
    expect(widePreview.body.columns).to.have.lengthOf(100);
    expect(widePreview.body.rows[0]).to.have.lengthOf(100);
    expect(widePreview.body).to.include({ moreColumns: true, moreRows: true, sheet: null, sheets: null });
    expect(
      expectErrorBody(
        await call('GET', `/files/${wide.body.id}/versions/1/preview?sheet=First`, { token: a.adminToken }),
        400,
      ).message,
    ).to.equal('query.sheet: a TSV version has no sheets');
    await expectHiddenFrom(b.adminToken, [up.body.id, wide.body.id]);
    expectErrorBody(
      await call('GET', `/files/${up.body.id}/versions/1/preview`, { token: b.adminToken }),
      404,
    );
  });

  it('download links: signed, for exactly one version, and they expire', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const v1Bytes = csv(2, 2, 'one');
    const v2Bytes = await xlsx(2);
    const up = await uploadFile(v1Bytes, { token: a.adminToken, name: 'report été.csv' });
    await uploadTo(`/files/${up.body.id}/versions`, v2Bytes, { token: a.adminToken, name: 'report.xlsx' });
    const key = await createApiKey(a.employee, ['files:read']);
    // the employee's key cannot see a private file of the admin
    expectErrorBody(await call('GET', `/files/${up.body.id}/versions/1/download-link`, { token: key }), 404);
    await call('PATCH', `/files/${up.body.id}`, { token: a.adminToken, json: { visibility: 'company' } });

    const link1 = await call('GET', `/files/${up.body.id}/versions/1/download-link`, { token: key });
    expect(link1.status, link1.text).to.equal(200);
    expect(link1.body.expiresIn).to.equal(testEnv().config.files.downloadLinkTtlSeconds);
    expect(Date.parse(link1.body.expiresAt) - Date.now()).to.be.within(290_000, 301_000);
    const link2 = await call('GET', `/files/${up.body.id}/versions/2/download-link`, { token: key });

    const got1 = await fetch(link1.body.url);
    expect(got1.status).to.equal(200);
    expect(Buffer.from(await got1.arrayBuffer()).toString()).to.equal(v1Bytes);
    expect(
      got1.headers.get('content-disposition'),
      String(got1.headers.get('content-disposition')),
    ).to.include("filename*=UTF-8''report%20%C3%A9t%C3%A9.csv");
    const got2 = await fetch(link2.body.url);
    expect(Buffer.from(await got2.arrayBuffer()).equals(v2Bytes)).to.equal(true);

    // the signature covers the object: pointing version 1's link at version 2's object is refused
    const rows = await testEnv().knex('fileVersions').where({ fileId: up.body.id }).orderBy('version');
    const tampered = new URL(link1.body.url);
    tampered.pathname = tampered.pathname.replace(rows[0].objectKey, rows[1].objectKey);
    expect(tampered.pathname).to.include(rows[1].objectKey);
    expect((await fetch(tampered)).status).to.equal(403);

    // a short link expires
    const short = await call('GET', `/files/${up.body.id}/versions/1/download-link?expiresIn=1`, {
      token: key,
    });
    expect(short.body.expiresIn).to.equal(1);
    await new Promise((r) => setTimeout(r, 2500));
    const late = await fetch(short.body.url);
    expect(late.status).to.equal(403);
    expect(await late.text()).to.match(/expired/i);

    expectErrorBody(
      await call('GET', `/files/${up.body.id}/versions/1/download-link?expiresIn=0`, { token: key }),
      400,
    );
    expectErrorBody(await call('GET', `/files/${up.body.id}/versions/3/download-link`, { token: key }), 404);
    expectErrorBody(
      await call('GET', `/files/${up.body.id}/versions/1/download-link`, { token: b.adminToken }),
      404,
    );
  });

  it('download links point at S3_PUBLIC_ENDPOINT', async () => {
    const config = loadConfig({ ...process.env, S3_PUBLIC_ENDPOINT: 'https://files.example.test' });
    const { url, expiresAt } = await downloadLink(
      config,
      'files/x/y/z',
      'a.csv',
      60,
      new Date('2026-01-01T00:00:00Z'),
    );
    const parsed = new URL(url);
    expect(parsed.origin).to.equal('https://files.example.test');
    expect(parsed.pathname).to.equal(`/${config.s3.bucket}/files/x/y/z`);
    expect(parsed.searchParams.get('X-Amz-Expires')).to.equal('60');
    expect(expiresAt).to.equal('2026-01-01T00:01:00.000Z');
    expect(loadConfig({ ...process.env, S3_PUBLIC_ENDPOINT: '' }).s3.publicEndpoint).to.equal(
      config.s3.endpoint,
    );
  });

  it('an upload starts the report workflow after commit, which builds the report of the version', async () => {
    // a worker on the run's task queue, stopped at the end so it takes no work meant for later tests
    const worker = await startWorker();
    try {
      const a = await createTeam({ plan: 'premium' });
      const b = await createTeam({ plan: 'premium' });
      const up = await uploadFile(csv(3), { token: a.adminToken });
      await expectHiddenFrom(b.adminToken, [up.body.id]);
      const v2 = await uploadTo(`/files/${up.body.id}/versions`, csv(4), { token: a.adminToken });
      const { knex, temporal } = testEnv();
      const reports = await eventually(
        async () => {
          const rows = await knex('reports').where({ fileId: up.body.id }).orderBy('version');
          return rows.length === 2 && rows.every((r: any) => r.status === 'ready') ? rows : undefined;
        },
        { what: 'two ready reports', timeoutMs: 45_000 },
      );
      expect(reports.map((r: any) => [r.version, r.status, r.workflowId, r.companyId])).to.deep.equal([
        [1, 'ready', `report:${up.body.id}:v1`, a.company.id],
        [2, 'ready', `report:${up.body.id}:v2`, a.company.id],
      ]);
      expect(reports[1].fileVersionId).to.equal(v2.body.id);
      const handle = temporal.workflow.getHandle(`report:${up.body.id}:v1`);
      expect(await handle.result()).to.deep.equal({ status: 'ready' });
      const description = await handle.describe();
      expect(description.typedSearchAttributes.get(COMPANY_ID)).to.equal(a.company.id);
      // a failed upload starts nothing
      const before = await knex('reports').where({ companyId: a.company.id }).count({ n: '*' }).first();
      expectErrorBody(await uploadFile('not a table', { token: a.adminToken }), 400);
      // an explicit signal instead of a pause: a good upload made afterwards gets its report row; the
      // failed one, had it started anything, would have been recorded by then too — only one row is new
      const after = await uploadFile(csv(2), { token: a.adminToken });
      await eventually(async () => knex('reports').where({ fileId: after.body.id }).first(), {
        what: 'the later upload recorded',
        timeoutMs: 45_000,
      });
      expect(
        await knex('reports').where({ companyId: a.company.id }).count({ n: '*' }).first(),
      ).to.deep.equal({ n: String(Number((before as { n: string }).n) + 1) });
    } finally {
      await worker.stop();
    }
  });
});
