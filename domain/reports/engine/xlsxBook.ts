import type { Readable } from 'node:stream';
import * as yauzl from 'yauzl';
import { openEntry, readEntries } from '../../files/xlsx';
import { workbookLayout } from '../../files/xlsxPreview';

/**
 * What the loader needs of ExcelJS's streaming WorkbookReader (4.4.0): its parsers of each part, methods of its
 * own, not of its typings (`workbookSheets` checks they are there). Its own driver, `parse()`, is not used: it
 * reads the zip in one pass in the order of its entries (unzipper's `Parse`), and
 * - lost worksheets: without a shared strings part before them, it sets every worksheet aside in a temporary
 *   file, and the last entry of the zip never came (a workbook of 2, 4 or 5 sheets and no shared strings gave 1,
 *   3 and 3 sheets; ExcelJS issue 2790 describes entries it never drains);
 * - wrote a worksheet that comes before the shared strings (as ExcelJS's own streaming writer stores them) to a
 *   temporary file and read it back: the whole sheet's XML twice through the disk;
 * - emitted sheets in the order of their parts, not the workbook's, named only when the relationship's target
 *   is written relative (`worksheets/sheet1.xml`; EPPlus writes `/xl/worksheets/sheet1.xml`: the sheet became
 *   `Sheet1`), and skipped worksheet parts not called `sheet<N>.xml`.
 */
interface ReaderParts {
  _parseWorkbook(entry: Readable): Promise<void>;
  _parseSharedStrings(entry: Readable): AsyncGenerator<unknown>;
  _parseStyles(entry: Readable): Promise<void>;
  _parseWorksheet(chunks: AsyncIterable<Buffer | string>, sheetNo: string): Generator<unknown>;
}

/** One worksheet of the workbook: ExcelJS's WorksheetReader, not started, and the name the workbook gives it. */
export interface BookSheet {
  worksheet: unknown;
  name: string;
}

function openFile(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(
      file,
      { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false },
      (err, zip) => (err || !zip ? reject(err ?? new Error('no zip')) : resolve(zip)),
    ),
  );
}

/** Bytes of a worksheet handed to ExcelJS's parser at a time: what a file stream reads at once. */
const CHUNK_BYTES = 64 * 1024;

/**
 * A part's inflated bytes in pieces of about CHUNK_BYTES (zlib hands them over 16 KB at a time). Measured on a
 * 13 MB workbook, medians of 5 alternating runs on a busy machine: 16 KB 8.5 s, 64 KB 8.5 s, 128 KB 9.4 s, 1 MB
 * 13–14 s (ExcelJS's parser and the loader's text passes slow down with larger pieces).
 */
async function* coalesced(stream: Readable): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream) {
    held.push(chunk as Buffer);
    bytes += (chunk as Buffer).length;
    if (bytes >= CHUNK_BYTES) {
      yield held.length === 1 ? held[0] : Buffer.concat(held, bytes);
      held = [];
      bytes = 0;
    }
  }
  if (bytes > 0) yield held.length === 1 ? held[0] : Buffer.concat(held, bytes);
}

/**
 * The worksheets of the XLSX file `file`, through `reader`'s parsers (a WorkbookReader made with `worksheets:
 * 'emit'`, not started): the zip's directory is read first, so the workbook, the shared strings and the styles
 * are parsed before any worksheet, whatever their order in the file; then each sheet the workbook lists, in its
 * order and with its name (the preview's `workbookLayout`), then any other worksheet part, by name (`Sheet<k>`
 * for the k-th sheet). A sheet's rows are read from the
 * zip while the caller iterates its WorksheetReader; the caller iterates each before taking the next.
 */
export async function* workbookSheets(reader: object, file: string): AsyncGenerator<BookSheet> {
  const book = reader as ReaderParts;
  for (const method of [
    '_parseWorkbook',
    '_parseSharedStrings',
    '_parseStyles',
    '_parseWorksheet',
  ] as const) {
    if (typeof book[method] !== 'function') {
      throw new Error(`ExcelJS's WorkbookReader has no ${method} to read the workbook's parts with`);
    }
  }
  const zip = await openFile(file);
  try {
    const entries = await readEntries(zip, 100_000);
    // which part is which sheet: the preview's own reading of the workbook (./xlsxPreview.ts), so both list
    // the same sheets under the same names
    const layout = await workbookLayout(zip, entries);
    // ExcelJS's workbook properties (its worksheet reader takes the date system from them). Its relationships
    // are not parsed: without them its worksheet reader names no sheet (the names are the layout's)
    const workbook = entries.find((e) => e.fileName === 'xl/workbook.xml');
    if (workbook) await book._parseWorkbook(await openEntry(zip, workbook));
    if (layout.sharedStrings) {
      for await (const _ of book._parseSharedStrings(await openEntry(zip, layout.sharedStrings))) {
        // 'cache': the strings are kept by the reader; nothing is emitted
      }
    }
    if (layout.styles) await book._parseStyles(await openEntry(zip, layout.styles));

    const order: Array<{ entry: yauzl.Entry; name: string | undefined }> = [];
    const taken = new Set<string>();
    for (const { name, part } of layout.sheets) {
      if (!part || taken.has(part.fileName)) continue;
      taken.add(part.fileName);
      order.push({ entry: part, name });
    }
    for (const entry of layout.worksheets) {
      if (!taken.has(entry.fileName)) order.push({ entry, name: undefined });
    }

    for (const [k, { entry, name }] of order.entries()) {
      const sheetNo = /sheet(\d+)\.xml$/.exec(entry.fileName)?.[1] ?? String(k + 1);
      const stream = await openEntry(zip, entry);
      let worksheet: unknown;
      for (const event of book._parseWorksheet(coalesced(stream), sheetNo)) {
        const e = event as { eventType?: string; value?: unknown };
        if (e.eventType === 'worksheet') worksheet = e.value;
      }
      if (worksheet === undefined) throw new Error("ExcelJS's WorkbookReader emitted no worksheet");
      try {
        yield { worksheet, name: name ?? `Sheet${k + 1}` };
      } finally {
        stream.destroy();
      }
    }
  } finally {
    zip.close();
  }
}
