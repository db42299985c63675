import { expect } from 'chai';
import { inspectStoredXlsx } from '../../../domain/files/xlsx';
import { testEnv } from '../../helpers/env';
import {
  CONTENT_TYPES_XML,
  sheetXml,
  WORKBOOK_XML,
  xlsx,
  zip,
  storeObject,
  XLSX_TEST_LIMITS,
} from '../../helpers/files';

const limits = XLSX_TEST_LIMITS;

const stored = (name: string, data: Buffer) => storeObject('unit-xlsx', name, data);

describe('XLSX inspection from the stored object (real MinIO)', function () {
  this.timeout(30_000);

  it('reads the directory and the first worksheet dimension of a real workbook', async () => {
    const { storage } = testEnv();
    const { key, size } = await stored('ok.xlsx', await xlsx(25, 4));
    expect(await inspectStoredXlsx(storage.client, storage.bucket, key, size, limits)).to.deep.equal({
      sheets: 1,
      rows: 25,
      columns: 4,
    });
  });

  it('refuses a workbook whose parts unpack to more than the limit, before unpacking anything', async () => {
    const { storage } = testEnv();
    // two 600 KB worksheets of varied text: a normal ratio, but 1.2 MB unpacked in all
    const rows = Array.from(
      { length: 12_000 },
      (_, i) => `<row r="${i + 1}"><c r="A${i + 1}"><v>${i * 7919}</v></c></row>`,
    ).join('');
    const data = zip([
      { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
      { name: 'xl/workbook.xml', data: WORKBOOK_XML },
      { name: 'xl/worksheets/sheet1.xml', data: sheetXml('A1:A12000', rows) },
      { name: 'xl/worksheets/sheet2.xml', data: sheetXml('A1:A12000', rows) },
    ]);
    const { key, size } = await stored('big.xlsx', data);
    try {
      await inspectStoredXlsx(storage.client, storage.bucket, key, size, {
        ...limits,
        maxUnpackedBytes: 1024 * 1024,
      });
      expect.fail('accepted');
    } catch (err) {
      expect((err as Error).message).to.match(
        /^the workbook unpacks to \d+ bytes; at most 1048576 are accepted$/,
      );
    }
    // the same workbook within the default limits
    expect(await inspectStoredXlsx(storage.client, storage.bucket, key, size, limits)).to.include({
      sheets: 2,
    });
  });
});
