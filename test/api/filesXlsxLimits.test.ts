import { expect } from 'chai';
import { expectErrorBody } from '../helpers/http';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { CONTENT_TYPES_XML, footprint, sheetXml, uploadFile, WORKBOOK_XML, zip } from '../helpers/files';
import { startApp } from '../helpers/servers';

function workbookWithStrings(count: number): Buffer {
  const strings = Array.from({ length: count }, (_, i) => `<si><t>value ${i}</t></si>`).join('');
  return zip([
    { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
    { name: 'xl/workbook.xml', data: WORKBOOK_XML },
    {
      name: 'xl/worksheets/sheet1.xml',
      data: sheetXml('A1:A2', '<row r="1"><c r="A1" t="s"><v>0</v></c></row>'),
    },
    { name: 'xl/sharedStrings.xml', data: `<sst>${strings}</sst>` },
  ]);
}

describe('files: XLSX shared strings are bounded at upload (400), limits from configuration', function () {
  this.timeout(60_000);

  it('refuses shared strings over the configured size or count, keeps nothing, and accepts them within', async () => {
    const files = testEnv().config.files;
    const small = await startApp({
      config: { files: { ...files, xlsxMaxSharedStringsBytes: 2048, xlsxMaxSharedStrings: 50 } },
    });
    const a = await createTeam({ plan: 'premium' });
    const big = await uploadFile(workbookWithStrings(200), {
      token: a.adminToken,
      name: 'big.xlsx',
      baseUrl: small.baseUrl,
    });
    expect(String(expectErrorBody(big, 400).message)).to.match(
      /^the workbook's shared strings unpack to \d+ bytes; at most 2048 are accepted$/,
    );
    const many = await uploadFile(workbookWithStrings(60), {
      token: a.adminToken,
      name: 'many.xlsx',
      baseUrl: small.baseUrl,
    });
    expect(expectErrorBody(many, 400).message).to.equal(
      'the workbook has more than 50 shared strings; at most 50 are accepted',
    );
    expect(await footprint(a.company.id)).to.include({ files: 0, versions: 0, objects: 0 });
    const fine = await uploadFile(workbookWithStrings(40), {
      token: a.adminToken,
      name: 'fine.xlsx',
      baseUrl: small.baseUrl,
    });
    expect(fine.status, fine.text).to.equal(201);
    // the same workbooks pass the default limits
    const ok = await uploadFile(workbookWithStrings(200), { token: a.adminToken, name: 'big.xlsx' });
    expect(ok.status, ok.text).to.equal(201);
  });
});
