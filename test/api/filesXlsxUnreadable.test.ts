/**
 * A stored workbook that cannot be read where a preview or a header needs it (XML that is not well-formed,
 * a part that does not unpack) answers 422 with the error body, naming the part and the position, never a
 * cell's text; never a 500.
 */
import { expect } from 'chai';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { call, expectErrorBody } from '../helpers/http';
import { CONTENT_TYPES_XML, sheetXml, uploadFile, uploadTo, WORKBOOK_XML, zip } from '../helpers/files';

const SECRET = 'cell-text-not-for-errors';

function workbook(sheetBody: string, more: Array<{ name: string; data: string }> = []): Buffer {
  return zip([
    { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
    { name: 'xl/workbook.xml', data: WORKBOOK_XML },
    { name: 'xl/worksheets/sheet1.xml', data: sheetXml('A1:B2', sheetBody) },
    ...more,
  ]);
}

const inline = (ref: string, text: string) => `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;
const NOT_WELL_FORMED =
  /^the workbook cannot be read: the part xl\/worksheets\/sheet1\.xml is not well-formed XML \(line \d+, column \d+\)$/;

describe('files: an XLSX that cannot be read answers 422 on preview and on POST /comparisons', function () {
  this.timeout(60_000);

  it('previews of sheets that are not well-formed XML: 422 naming the part, never the cells', async () => {
    const a = await createTeam({ plan: 'premium' });
    const header = `<row r="1">${inline('A1', SECRET)}${inline('B1', 'b')}</row>`;
    for (const [what, row] of [
      ['an undefined entity', `<row r="2">${inline('A2', `${SECRET}&nbsp;b`)}</row>`],
      ['a mismatched close tag', `<row r="2"><c r="A2"><v>1</v></row>`],
      ['a character reference to NUL', `<row r="2">${inline('A2', `${SECRET}&#0;`)}</row>`],
    ] as const) {
      const up = await uploadFile(workbook(header + row), { token: a.adminToken, name: 'bad.xlsx' });
      expect(up.status, `${what}: ${up.text}`).to.equal(201);
      const res = await call('GET', `/files/${up.body.id}/versions/1/preview`, { token: a.adminToken });
      const message = String(expectErrorBody(res, 422).message);
      expect(message, what).to.match(NOT_WELL_FORMED);
      expect(message).not.to.include(SECRET);
    }
    // the shared strings, read only for the rows shown
    const strings = '<sst><si><t>a&nbsp;b</t></si></sst>';
    const up = await uploadFile(
      workbook('<row r="1"><c r="A1" t="s"><v>0</v></c></row>', [
        { name: 'xl/sharedStrings.xml', data: strings },
      ]),
      { token: a.adminToken, name: 'strings.xlsx' },
    );
    expect(up.status, up.text).to.equal(201);
    const res = await call('GET', `/files/${up.body.id}/versions/1/preview`, { token: a.adminToken });
    expect(expectErrorBody(res, 422).message).to.match(
      /^the workbook cannot be read: the part xl\/sharedStrings\.xml is not well-formed XML \(line \d+, column \d+\)$/,
    );
  });

  it('a stored part that does not unpack: 422 naming the part', async () => {
    const { knex, storage } = testEnv();
    const a = await createTeam({ plan: 'premium' });
    const body = `<row r="1">${inline('A1', 'a')}</row>`;
    const up = await uploadFile(workbook(body), { token: a.adminToken, name: 'ok.xlsx' });
    expect(up.status, up.text).to.equal(201);
    // as if corrupted in storage: the sheet's deflate data starts with a reserved block type
    const broken = workbook(body);
    const name = Buffer.from('xl/worksheets/sheet1.xml');
    broken[broken.indexOf(name) + name.length] = 0xff;
    const version = await knex('fileVersions').where({ fileId: up.body.id }).first();
    await storage.client.putObject(storage.bucket, version.objectKey, broken, broken.length);
    const res = await call('GET', `/files/${up.body.id}/versions/1/preview`, { token: a.adminToken });
    expect(expectErrorBody(res, 422).message).to.equal(
      'the workbook cannot be read: the part xl/worksheets/sheet1.xml cannot be unpacked',
    );
  });

  it('date cells that are no dates are previewed as their text or number, not a 500', async () => {
    const a = await createTeam({ plan: 'premium' });
    const styles =
      '<styleSheet><cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/></cellXfs></styleSheet>';
    const up = await uploadFile(
      workbook(
        `<row r="1">${inline('A1', 'when')}${inline('B1', 'serial')}</row>` +
          '<row r="2"><c r="A2" t="d"><v>not a date</v></c><c r="B2" s="1"><v>1e20</v></c></row>' +
          '<row r="3"><c r="A3" t="d"><v>2024-01-02T00:00:00Z</v></c><c r="B3" s="1"><v>45000</v></c></row>' +
          // an ISO date cell's time without a zone is UTC, whatever the process's zone
          '<row r="4"><c r="A4" t="d"><v>2024-01-02T10:00:00</v></c></row>',
        [{ name: 'xl/styles.xml', data: styles }],
      ),
      { token: a.adminToken, name: 'dates.xlsx' },
    );
    expect(up.status, up.text).to.equal(201);
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      const res = await call('GET', `/files/${up.body.id}/versions/1/preview`, { token: a.adminToken });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.rows).to.deep.equal([
        ['not a date', 1e20],
        ['2024-01-02T00:00:00.000Z', '2023-03-15T00:00:00.000Z'],
        ['2024-01-02T10:00:00.000Z', null],
      ]);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('POST /comparisons with key columns whose header cannot be read: 422 naming the version, nothing kept', async () => {
    const { knex } = testEnv();
    const a = await createTeam({ plan: 'premium' });
    const good = workbook(`<row r="1">${inline('A1', 'id')}${inline('B1', 'name')}</row>`);
    const bad = workbook(`<row r="1">${inline('A1', `id&nbsp;${SECRET}`)}</row>`);
    const up = await uploadFile(good, { token: a.adminToken, name: 'c.xlsx' });
    expect(up.status, up.text).to.equal(201);
    const id = up.body.id as string;
    const v2 = await uploadTo(`/files/${id}/versions`, bad, { token: a.adminToken, name: 'c.xlsx' });
    expect(v2.status, v2.text).to.equal(201);
    const before = await knex('comparisons').where({ fileId: id }).count({ n: '*' }).first();
    const res = await call('POST', '/comparisons', {
      token: a.adminToken,
      json: { base: { fileId: id, version: 1 }, target: { fileId: id, version: 2 }, keyColumns: ['id'] },
    });
    const message = String(expectErrorBody(res, 422).message);
    expect(message).to.match(
      /^the target version \(2\): the workbook cannot be read: the part xl\/worksheets\/sheet1\.xml is not well-formed XML \(line \d+, column \d+\)$/,
    );
    expect(message).not.to.include(SECRET);
    expect(await knex('comparisons').where({ fileId: id }).count({ n: '*' }).first()).to.deep.equal(before);
    // without key columns no header is read: accepted, and the run reports its own reason
    const plain = await call('POST', '/comparisons', {
      token: a.adminToken,
      json: { base: { fileId: id, version: 1 }, target: { fileId: id, version: 2 } },
    });
    expect(plain.status, plain.text).to.equal(202);
  });
});
