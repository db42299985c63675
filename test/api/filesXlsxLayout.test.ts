/**
 * The zip guards read an XLSX's directory; the report builds read its local entries in order (ExcelJS's
 * WorkbookReader). An entry the directory does not list must be refused at upload, not read by a build.
 */
import { Readable, Writable } from 'node:stream';
import { expect } from 'chai';
import ExcelJS from 'exceljs';
import { call, expectErrorBody } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import {
  CONTENT_TYPES_XML,
  footprint,
  hiddenSharedStringsWorkbook,
  sheetXml,
  uploadFile,
  WORKBOOK_XML,
  xlsx,
  zip,
} from '../helpers/files';

/** The workbook as a streaming writer (ExcelJS's WorkbookWriter) writes it: every entry with a data descriptor. */
async function streamedWorkbook(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, useSharedStrings: true });
  const sheet = workbook.addWorksheet('Data');
  sheet.addRow(['name', 'amount']).commit();
  for (let i = 0; i < 50; i++) sheet.addRow([`name ${i}`, i]).commit();
  sheet.commit();
  await workbook.commit();
  return Buffer.concat(chunks);
}

describe('files: an XLSX zip whose local entries are not exactly its directory is refused (400)', function () {
  this.timeout(60_000);

  it('refuses shared strings hidden from the directory, keeps nothing; the streaming reader would read them', async () => {
    const hostile = hiddenSharedStringsWorkbook();
    // the threat: the reader of the report builds finds the hidden part and caches its 100,000 strings
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(Readable.from([hostile]), {
      worksheets: 'emit',
      sharedStrings: 'cache',
      styles: 'ignore',
      hyperlinks: 'ignore',
      entries: 'ignore',
    });
    const values: unknown[] = [];
    for await (const sheet of reader)
      for await (const row of sheet) values.push((row.values as unknown[])[1]);
    expect(values).to.deep.equal(['hidden value 0', 1]);

    const a = await createTeam({ plan: 'premium' });
    const res = await uploadFile(hostile, { token: a.adminToken, name: 'hidden.xlsx' });
    expect(expectErrorBody(res, 400).message).to.match(
      /^the workbook's zip is refused: the local entry xl\/sharedStrings\.xml at byte \d+ is not in its directory$/,
    );
    expect(await footprint(a.company.id)).to.include({ files: 0, versions: 0, objects: 0, events: 0 });
  });

  it('refuses a local header that names another part or hides data behind a smaller size', async () => {
    const a = await createTeam({ plan: 'premium' });
    const sheet = sheetXml('A1:A1', '<row r="1"><c r="A1"><v>1</v></c></row>');
    const base = [
      { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
      { name: 'xl/workbook.xml', data: WORKBOOK_XML },
      { name: 'xl/worksheets/sheet1.xml', data: sheet },
    ];
    const renamed = zip([
      ...base,
      {
        name: 'docProps/app.xml',
        data: '<sst><si><t>x</t></si></sst>',
        local: { name: 'xl/sharedStrings.xml' },
      },
    ]);
    expect(
      expectErrorBody(await uploadFile(renamed, { token: a.adminToken, name: 'r.xlsx' }), 400).message,
    ).to.equal("the workbook's zip is refused: the local header of docProps/app.xml names another part");
    // the directory's entry spans a local entry of its own: the local header's size ends the data before it
    const inner = zip([{ name: 'xl/sharedStrings.xml', data: '<sst><si><t>x</t></si></sst>' }]);
    const innerLocal = inner.subarray(0, inner.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])));
    const cover = Buffer.concat([Buffer.from('<Types/>'), innerLocal]);
    const shrunk = zip([
      ...base,
      { name: 'docProps/core.xml', data: cover, store: true, local: { compressedSize: 8 } },
    ]);
    expect(
      expectErrorBody(await uploadFile(shrunk, { token: a.adminToken, name: 's.xlsx' }), 400).message,
    ).to.equal(
      "the workbook's zip is refused: the local header of docProps/core.xml gives another compressed size",
    );
    expect(await footprint(a.company.id)).to.include({ files: 0, versions: 0, objects: 0 });
  });

  it('refuses a part the builds parse whole (styles) that unpacks to more than its directory says', async () => {
    const a = await createTeam({ plan: 'premium' });
    // ~7 MB of fonts packed ~1000× into ~7 KB; the directory says 1 KB, under every limit
    const fonts = '<font><sz val="11"/></font>'.repeat(250_000);
    const bomb = zip([
      { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
      { name: 'xl/workbook.xml', data: WORKBOOK_XML },
      { name: 'xl/styles.xml', data: `<styleSheet><fonts>${fonts}</fonts></styleSheet>`, declaredSize: 1024 },
      {
        name: 'xl/worksheets/sheet1.xml',
        data: sheetXml('A1:A1', '<row r="1"><c r="A1"><v>1</v></c></row>'),
      },
    ]);
    expect(bomb.length).to.be.below(64 * 1024);
    const res = await uploadFile(bomb, { token: a.adminToken, name: 'styles.xlsx' });
    expect(expectErrorBody(res, 400).message).to.equal(
      'the workbook part xl/styles.xml does not unpack to the size its zip directory gives',
    );
    expect(await footprint(a.company.id)).to.include({ files: 0, versions: 0, objects: 0 });
  });

  it('accepts an ExcelJS workbook, a streamed one (data descriptors) and a hand-built one with descriptors', async () => {
    const a = await createTeam({ plan: 'premium' });
    const plain = await uploadFile(await xlsx(20, 3), { token: a.adminToken, name: 'plain.xlsx' });
    expect(plain.status, plain.text).to.equal(201);
    const streamed = await uploadFile(await streamedWorkbook(), {
      token: a.adminToken,
      name: 'streamed.xlsx',
    });
    expect(streamed.status, streamed.text).to.equal(201);
    const preview = await call('GET', `/files/${streamed.body.id}/versions/1/preview?rows=1`, {
      token: a.adminToken,
    });
    expect(preview.status, preview.text).to.equal(200);
    expect(preview.body).to.deep.include({ columns: ['name', 'amount'], rows: [['name 0', 0]] });
    const byHand = zip([
      { name: '[Content_Types].xml', data: CONTENT_TYPES_XML, descriptor: true },
      { name: 'xl/workbook.xml', data: WORKBOOK_XML, descriptor: true },
      {
        name: 'xl/worksheets/sheet1.xml',
        data: sheetXml('A1:A2', '<row r="1"><c r="A1" t="inlineStr"><is><t>n</t></is></c></row>'),
        descriptor: true,
        store: true,
      },
    ]);
    const hand = await uploadFile(byHand, { token: a.adminToken, name: 'hand.xlsx' });
    expect(hand.status, hand.text).to.equal(201);
  });
});
