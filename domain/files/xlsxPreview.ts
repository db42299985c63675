import type * as Minio from 'minio';
import type * as yauzl from 'yauzl';
import { BadRequestError } from '../../common/errors';
import { plainCell, shapePreview, type CellValue, type Preview, type PreviewOptions } from './preview';
import { MAX_RECORDS_ABOVE, SHEET_HEADER_SAMPLE, SheetHeaderSample, TEXT_CELL_TYPES } from './sniff';
import { UnreadableFileError } from './unreadable';
import { ObjectRangeReader, openZip, readEntries, type XlsxLimits } from './xlsx';
import { isoCellDate, serialClockText, serialDate, type DateStyle } from './xlsxDates';
import {
  CANNOT_READ,
  dateStyles,
  Enough,
  readSharedStrings,
  readSheetRows,
  workbookLayout,
  type SheetCell,
} from './xlsxRead';

interface WorkbookMap {
  sheet: yauzl.Entry;
  /** the name of `sheet` as the workbook lists it (null for a workbook that lists no sheets) */
  sheetName: string | null;
  /** the names of the workbook's sheets, in its order */
  sheetNames: string[];
  sharedStrings?: yauzl.Entry;
  styles?: yauzl.Entry;
  date1904: boolean;
}

/**
 * The sheet to preview — the one named `sheetName`, else the first (by the workbook's list and its
 * relationships; else the first worksheet part by name) — with the workbook's sheet names, strings and styles.
 * A name the workbook does not list is 400, naming the sheets it has.
 */
async function mapWorkbook(
  zip: yauzl.ZipFile,
  entries: yauzl.Entry[],
  sheetName?: string,
): Promise<WorkbookMap> {
  const layout = await workbookLayout(zip, entries);
  const sheetNames = layout.sheets.map((s) => s.name);
  // by default the first sheet with cells (a workbook may open on a chart sheet)
  let chosen = layout.sheets.find((s) => s.part) ?? layout.sheets[0];
  if (sheetName !== undefined) {
    chosen = layout.sheets.find((s) => s.name === sheetName)!;
    if (!chosen) {
      const names = sheetNames.map((n) => JSON.stringify(n)).join(', ');
      throw new BadRequestError(
        `query.sheet: the workbook has no sheet named ${JSON.stringify(sheetName)} (its sheets: ${names || 'none listed'})`,
      );
    }
  }
  const named = chosen?.part;
  if (sheetName !== undefined && chosen && !chosen.cells) {
    throw new BadRequestError(
      `query.sheet: the sheet ${JSON.stringify(sheetName)} holds no cells (a chart sheet or a dialog sheet)`,
    );
  }
  if (sheetName !== undefined && !named) {
    throw new UnreadableFileError(
      `${CANNOT_READ}: its sheet ${JSON.stringify(sheetName)} has no worksheet part`,
    );
  }
  const sheet = named ?? layout.worksheets[0];
  if (!sheet) throw new UnreadableFileError(`${CANNOT_READ}: it has no worksheet`);
  return {
    sheet,
    sheetName: named ? (chosen?.name ?? null) : null,
    sheetNames,
    sharedStrings: layout.sharedStrings,
    styles: layout.styles,
    date1904: layout.date1904,
  };
}

/** A cell as read from the sheet: a value, or the index of a shared string resolved afterwards. */
type RawCell = CellValue | { shared: number };

/** Reads the first `wanted` rows of a worksheet, each at most `width` cells, and stops there. */
async function readRows(
  zip: yauzl.ZipFile,
  sheet: yauzl.Entry,
  wanted: number,
  width: number,
  maxChars: number,
  dates: Map<number, DateStyle>,
  date1904: boolean,
): Promise<Array<{ cells: RawCell[]; number: number; width: number; names: boolean }>> {
  const rows: Array<{ cells: RawCell[]; number: number; width: number; names: boolean }> = [];
  const clip = (text: string) => (text.length > maxChars ? text.slice(0, maxChars) : text);
  const value = (c: SheetCell): RawCell => {
    switch (c.type) {
      case 's':
        return c.v === '' ? null : { shared: Number(c.v) };
      case 'inlineStr':
        return clip(c.inline);
      case 'str':
        return clip(c.v);
      case 'b':
        return c.v === '' ? null : c.v === '1' || c.v === 'true';
      case 'e':
        return c.v;
      case 'd': {
        if (c.v === '') return null;
        // a date cell whose text is no date is shown as its text (an Invalid Date has no ISO form)
        const date = isoCellDate(c.v);
        return Number.isNaN(date.getTime()) ? clip(c.v) : plainCell(date, maxChars);
      }
      default: {
        if (c.v === '') return null;
        const n = Number(c.v);
        if (!Number.isFinite(n)) return clip(c.v);
        const dated = dates.get(c.style);
        if (!dated) return n;
        // the report engine's rule and conversion (./xlsxDates.ts): a time of day alone or a duration as its
        // text; a serial beyond the dates JavaScript can hold is shown as the number
        const clock = serialClockText(n, dated);
        if (clock !== null) return clock;
        const date = serialDate(n, date1904);
        return Number.isNaN(date.getTime()) ? n : date.toISOString();
      }
    }
  };
  await readSheetRows(
    zip,
    sheet,
    (number, cells) => {
      const row: RawCell[] = [];
      // the row's width up to its last cell holding something, also beyond the columns shown (the header's
      // choice judges it as the report's loader does)
      let filled = 0;
      let texts = 0;
      for (const c of cells) {
        const v = value(c);
        if (c.col < width) row[c.col] = v;
        // (an error cell counts as empty there: the loader reads it as null)
        if (v !== null && v !== '' && c.type !== 'e') {
          filled = c.col + 1;
          if (TEXT_CELL_TYPES.has(c.type)) texts++;
        }
      }
      // names: every cell up to the last holding something is text (cells are distinct columns)
      rows.push({ cells: Array.from(row, (c) => c ?? null), number, width: filled, names: texts === filled });
      if (rows.length >= wanted) throw new Enough();
    },
    maxChars,
  );
  return rows;
}

/**
 * The preview of a stored XLSX, reading only what it shows: the zip directory by ranged reads, the first
 * worksheet inflated only up to the rows shown (plus one, to know there are more), then the shared strings
 * streamed only up to the last index those rows use, keeping only those strings, so a preview is cheap
 * whatever the size of the shared strings (no limit needed here; uploads bound them for whole-sheet readers).
 * A workbook that cannot be read (a part that is not well-formed XML or does not unpack, a broken zip) is
 * UnreadableFileError (422), naming the part and the position, never cell values.
 */
export async function previewStoredXlsx(
  client: Minio.Client,
  bucket: string,
  key: string,
  size: number,
  options: PreviewOptions & { sheet?: string },
  limits: Pick<XlsxLimits, 'maxEntries'>,
): Promise<Preview & { sheet: string | null; sheets: string[] }> {
  const reader = new ObjectRangeReader(client, bucket, key, size);
  await reader.loadTail();
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(reader, size);
  } catch {
    throw new UnreadableFileError(`${CANNOT_READ}: its zip structure is broken`);
  }
  try {
    let entries: yauzl.Entry[];
    try {
      entries = await readEntries(zip, limits.maxEntries);
    } catch (err) {
      // the upload's limits are checked again: one lowered since is a 422 here, as a broken directory
      if (err instanceof BadRequestError) throw new UnreadableFileError(`${CANNOT_READ}: ${err.message}`);
      throw new UnreadableFileError(`${CANNOT_READ}: its zip structure is broken`);
    }
    const book = await mapWorkbook(zip, entries, options.sheet);
    const dates = await dateStyles(zip, book.styles);
    const read = await readRows(
      zip,
      book.sheet,
      // enough rows to tell which is the header (a title or notes may come above the table), and the rows shown
      SHEET_HEADER_SAMPLE + MAX_RECORDS_ABOVE + options.rows + 2,
      options.maxColumns + 1,
      options.maxCellChars,
      dates,
      book.date1904,
    );
    // the header as the report's loader takes it (./sniff.ts): the rows above it are not shown
    const sample = new SheetHeaderSample<number>();
    read.forEach((r, i) => {
      if (r.width === 0) sample.blank();
      else if (!sample.full) sample.add(r.number, r.width, r.names, i);
    });
    const h = sample.headerIndex();
    const raw = read.slice(h > 0 ? sample.rows[h].item : 0).map((r) => r.cells);
    const moreRows = raw.length > options.rows + 1;
    const shown = raw.slice(0, options.rows + 1);
    const needed = new Set<number>();
    for (const r of shown) {
      for (const c of r) if (c !== null && typeof c === 'object') needed.add(c.shared);
    }
    const strings = new Map<number, string>();
    if (book.sharedStrings && needed.size > 0) {
      await readSharedStrings(
        zip,
        book.sharedStrings,
        (index) => needed.has(index),
        (index, text) => strings.set(index, text),
        Math.max(...needed),
        options.maxCellChars,
      );
    }
    const table: CellValue[][] = shown.map((r) =>
      r.map((c) => (c !== null && typeof c === 'object' ? (strings.get(c.shared) ?? null) : c)),
    );
    return { ...shapePreview(table, options, moreRows), sheet: book.sheetName, sheets: book.sheetNames };
  } finally {
    zip.close();
  }
}
