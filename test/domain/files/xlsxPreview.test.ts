/**
 * XLSX previews read dates as the report engine does: one date-format rule (domain/files/xlsxDates.ts).
 */
import { expect } from 'chai';
import ExcelJS from 'exceljs';
import { BadRequestError } from '../../../common/errors';
import { previewStoredXlsx } from '../../../domain/files/xlsxPreview';
import { testEnv } from '../../helpers/env';
import { chartSheetWorkbook, invoiceWorkbook, storeObject, XLSX_TEST_LIMITS } from '../../helpers/files';

const previewOptions = { rows: 5, maxColumns: 100, maxCellChars: 1000 };

/** Stores the workbook (written by ExcelJS) and previews it from the stored object. */
async function previewOf(name: string, workbook: ExcelJS.Workbook) {
  const { storage } = testEnv();
  const data = Buffer.from(await workbook.xlsx.writeBuffer());
  const { key, size } = await storeObject('unit-xlsx-preview', name, data);
  return previewStoredXlsx(storage.client, storage.bucket, key, size, previewOptions, XLSX_TEST_LIMITS);
}

describe('XLSX previews: dates as the report engine reads them (real MinIO)', function () {
  this.timeout(30_000);

  it("a date-formatted formula's result is a date; a format in upper case (YYYY, as LibreOffice writes) is a date too", async () => {
    for (const date1904 of [false, true]) {
      // Excel shows the year of 45292 formatted YYYY: a date as the report reads it (the day counted in the
      // workbook's date system)
      const workbook = invoiceWorkbook(date1904, { header: 'year', value: () => 45292, numFmt: 'YYYY' });
      const preview = await previewOf(`dates-${date1904}.xlsx`, workbook);
      const year = date1904 ? '2028-01-02T00:00:00.000Z' : '2024-01-01T00:00:00.000Z';
      expect(preview.rows, `date1904: ${date1904}`).to.deep.equal([
        ['2024-01-01T00:00:00.000Z', '2024-01-31T00:00:00.000Z', '2024-01-31T10:30:00.000Z', year],
        ['2024-01-15T00:00:00.000Z', '2024-02-14T00:00:00.000Z', '2024-02-14T10:30:00.000Z', year],
      ]);
    }
  });

  it('a number format with quoted text (written &quot;…&quot; in the styles part) is no date for its letters', async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Stock');
    sheet.addRow(['item', 'lead time', 'stock', 'price']);
    const row = sheet.addRow(['bolt', 30, 40, 3]);
    row.getCell(2).numFmt = '0" days"';
    row.getCell(3).numFmt = '#,##0" items"';
    row.getCell(4).numFmt = '"$"#,##0.00_);[Red]("$"#,##0.00)';
    const preview = await previewOf('units.xlsx', workbook);
    expect(preview.rows).to.deep.equal([['bolt', 30, 40, 3]]);
  });

  it('a time of day alone or a duration is previewed as the sheet shows it, as the report reads it', async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Shifts');
    sheet.addRow(['starts', 'length', 'ends']);
    // ExcelJS writes numbers as given: the serials of 08:30, 36 hours, and 2024-01-01 17:00
    const row = sheet.addRow([0.3541666666666667, 1.5, 45292 + 17 / 24]);
    row.getCell(1).numFmt = 'h:mm';
    row.getCell(2).numFmt = '[h]:mm';
    row.getCell(3).numFmt = 'h:mm'; // a whole date and time shown by its time: still that date and time
    const preview = await previewOf('shifts.xlsx', workbook);
    expect(preview.rows).to.deep.equal([['08:30:00', '36:00:00', '2024-01-01T17:00:00.000Z']]);
  });

  it('a workbook that opens on a chart sheet previews its first worksheet; the chart sheet is listed, and asking for it is 400', async () => {
    const { storage } = testEnv();
    const data = chartSheetWorkbook();
    const { key, size } = await storeObject('unit-xlsx-preview', 'chart.xlsx', data);
    const preview = await previewStoredXlsx(
      storage.client,
      storage.bucket,
      key,
      size,
      previewOptions,
      XLSX_TEST_LIMITS,
    );
    expect(preview).to.deep.include({ sheet: 'Data', sheets: ['Chart1', 'Data'] });
    expect(preview.rows).to.deep.equal([['a'], ['b']]);
    const asked = await previewStoredXlsx(
      storage.client,
      storage.bucket,
      key,
      size,
      { ...previewOptions, sheet: 'Data' },
      XLSX_TEST_LIMITS,
    );
    expect(asked.rows).to.deep.equal([['a'], ['b']]);
    let refused: unknown;
    await previewStoredXlsx(
      storage.client,
      storage.bucket,
      key,
      size,
      { ...previewOptions, sheet: 'Chart1' },
      XLSX_TEST_LIMITS,
    ).catch((err: unknown) => (refused = err));
    expect(refused).to.be.instanceOf(BadRequestError);
    expect((refused as Error).message).to.equal(
      'query.sheet: the sheet "Chart1" holds no cells (a chart sheet or a dialog sheet)',
    );
  });
});
