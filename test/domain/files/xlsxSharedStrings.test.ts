import { expect } from 'chai';
import { inspectStoredXlsx, type XlsxLimits } from '../../../domain/files/xlsx';
import { MAX_RECORDS_ABOVE, SHEET_HEADER_SAMPLE } from '../../../domain/files/sniff';
import { previewStoredXlsx } from '../../../domain/files/xlsxPreview';
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
const previewOptions = { rows: 2, maxColumns: 100, maxCellChars: 1000 };

const stored = (name: string, data: Buffer) => storeObject('unit-xlsx-sst', name, data);

/** Stores `data` and previews it from the stored object. */
async function previewOf(name: string, data: Buffer) {
  const { storage } = testEnv();
  const { key, size } = await stored(name, data);
  return previewStoredXlsx(storage.client, storage.bucket, key, size, previewOptions, limits);
}

function sst(strings: string[], tail = ''): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
    strings.map((s) => `<si><t>${s}</t></si>`).join('') +
    tail +
    '</sst>'
  );
}

function rowXml(r: number, cells: string[]): string {
  return `<row r="${r}">${cells.join('')}</row>`;
}

/** A workbook whose sheet uses shared strings `used` out of `count` distinct ones. */
function workbook(count: number, options: { sstTail?: string; sheetTail?: string; rows?: number } = {}) {
  const strings = Array.from({ length: count }, (_, i) => `s${i}-${'x'.repeat(i % 7)}`);
  const rows = [
    rowXml(1, [
      '<c r="A1" t="s"><v>0</v></c>',
      '<c r="B1" t="s"><v>1</v></c>',
      '<c r="C1" t="inlineStr"><is><t>inline</t></is></c>',
    ]),
    ...Array.from({ length: options.rows ?? 3 }, (_, i) =>
      rowXml(i + 2, [
        `<c r="A${i + 2}" t="s"><v>${2 + i}</v></c>`,
        `<c r="B${i + 2}"><v>${i + 0.5}</v></c>`,
        `<c r="C${i + 2}" t="b"><v>${i % 2}</v></c>`,
      ]),
    ),
  ];
  return {
    strings,
    data: zip([
      { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
      { name: 'xl/workbook.xml', data: WORKBOOK_XML },
      {
        name: 'xl/worksheets/sheet1.xml',
        data: sheetXml(null, rows.join('') + (options.sheetTail ?? '')),
      },
      { name: 'xl/sharedStrings.xml', data: sst(strings, options.sstTail) },
    ]),
  };
}

describe('XLSX shared strings: bounded at upload, read only as needed by previews (real MinIO)', function () {
  this.timeout(30_000);

  it('refuses shared strings over the size limit or the count limit (400), accepts them within', async () => {
    const { storage } = testEnv();
    const { data } = workbook(2000);
    const { key, size } = await stored('many.xlsx', data);
    const check = (l: Partial<XlsxLimits>) =>
      inspectStoredXlsx(storage.client, storage.bucket, key, size, { ...limits, ...l });
    expect(await check({})).to.include({ sheets: 1 });
    let refused = await check({ maxSharedStringsBytes: 4096 }).then(
      () => undefined,
      (err: Error & { status?: number }) => err,
    );
    expect(refused?.message).to.match(
      /^the workbook's shared strings unpack to \d+ bytes; at most 4096 are accepted$/,
    );
    refused = await check({ maxSharedStrings: 1999 }).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(refused?.message).to.equal(
      'the workbook has more than 1999 shared strings; at most 1999 are accepted',
    );
    expect(await check({ maxSharedStrings: 2000 })).to.include({ sheets: 1 });
  });

  it('previews from the stored object: values right, only the needed shared strings read', async () => {
    // everything after the strings the preview needs is broken XML: reading it would fail the preview; the
    // sheet's rows are read only as far as the header's choice needs (a title may come above the table: the
    // first SHEET_HEADER_SAMPLE rows holding something), then the rows shown
    const rows = SHEET_HEADER_SAMPLE + MAX_RECORDS_ABOVE + previewOptions.rows + 2;
    const { data } = workbook(rows + 2, {
      sstTail: '<si><t>never read</t></si><broken',
      sheetTail: '<row r="999"><c r="A999"><v>1</v></c></row><broken',
      rows,
    });
    const preview = await previewOf('lazy.xlsx', data);
    expect(preview).to.deep.equal({
      columns: ['s0-', 's1-x', 'inline'],
      rows: [
        ['s2-xx', 0.5, false],
        ['s3-xxx', 1.5, true],
      ],
      moreRows: true,
      moreColumns: false,
      // the workbook lists its sheet but has no relationships part: the first worksheet part is shown, unnamed
      sheet: null,
      sheets: ['S'],
    });
  });

  it('previews a workbook written by exceljs the same way (dates, formulas, booleans, nulls)', async () => {
    const preview = await previewOf('real.xlsx', await xlsx(3, 3));
    expect(preview).to.deep.equal({
      columns: ['col1', 'col2', 'col3'],
      rows: [
        ['r0', 0, 0],
        ['r1', 1, 2],
      ],
      moreRows: true,
      moreColumns: false,
      sheet: 'Data',
      sheets: ['Data'],
    });
  });
});
