import { isUtf8 } from 'node:buffer';
import { BadRequestError } from '../../common/errors';
import { chunkDecoder, eightBitEncoding, holdsUtf8Sequence, utf16ByBom, type TextEncoding } from './encoding';
import type { Delimiter, FileFormat, SheetLimits } from './formats';
import { hasLineBreak, isLineBreak, LINE_ENDINGS, type LineEndings } from './lineEndings';
import { separatorLine } from './separatorHint';

/** How many leading bytes decide what a file is. */
export const SNIFF_BYTES = 64 * 1024;
const SNIFF_RECORDS = 50;

export interface Sniffed {
  format: FileFormat;
  /** CSV/TSV only */
  delimiter?: Delimiter;
  /** CSV/TSV: the header's column count */
  columns?: number;
  /** CSV/TSV: the line-ending rule the file is read with (domain/files/lineEndings.ts) */
  lineEndings?: LineEndings;
  /** CSV/TSV: the text encoding of the first bytes (domain/files/encoding.ts); the upload may find later bytes
   * that are not UTF-8 (UploadInspector.encoding) */
  encoding?: TextEncoding;
  /**
   * CSV/TSV: lines before the header, when there are any (absent: 0) — Excel's separator line (`sep=;`, which
   * named the delimiter: domain/files/separatorHint.ts), a title or notes above the table (`tableBelowNotes`).
   * They are no rows: readers skip them.
   */
  linesBeforeHeader?: number;
  /**
   * CSV/TSV: the row a spreadsheet program shows the header on, when lines come before it (absent: 1): those
   * lines but Excel's separator line (Excel hides it), plus 1
   */
  headerRow?: number;
}

const DELIMITER_NAMES: Record<Delimiter, string> = { ',': 'comma', ';': 'semicolon', '\t': 'tab' };

const ZIP_LOCAL_HEADER = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const OLE2 = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export const NOT_A_SPREADSHEET =
  'the file is not a spreadsheet: accepted are XLSX, CSV and TSV (UTF-8, Windows-1252, Windows-1250, Mac Roman or UTF-16)';
export const MIXED_ENCODINGS = `${NOT_A_SPREADSHEET}: the text mixes UTF-8 with bytes UTF-8 does not allow (save it as UTF-8)`;

/** Length of a trailing, incomplete UTF-8 sequence (0 when the buffer ends on a character boundary). */
export function incompleteUtf8Tail(buf: Buffer): number {
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const byte = buf[buf.length - back];
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/** Control characters that never appear in a text table (tab, LF, CR and form feed are allowed). */
function hasBinaryControl(buf: Buffer): boolean {
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i];
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c) return true;
    if (b === 0x7f) return true;
  }
  return false;
}

/**
 * One of a CSV's first records or of a worksheet's first rows holding something, as the choice of its header
 * judges it (`headerBelowNotes`).
 */
export interface RowShape {
  /**
   * its fields or cells up to the last holding something: trailing empty ones are left out, as a spreadsheet
   * program pads a title line of its CSV export with delimiters to the table's width (`Title;;;;`); 0 for a
   * line or row holding nothing
   */
  width: number;
  /** an empty line, a line of delimiters only, or a row missing or holding nothing comes right before it */
  afterBlank: boolean;
  /**
   * every field or cell up to its width could be a header's name: text, not empty, no number or date
   * (`isName`); false for a line or row holding nothing
   */
  names: boolean;
}

/** A record of a text's first ones (`recordsOf`). */
export interface SniffedRecord extends RowShape {
  /** its fields, trailing empty ones included (what the delimiter's fit counts) */
  fields: number;
  /** where it starts in the text */
  start: number;
}

/**
 * The first complete records, quote-aware (a quoted field may hold delimiters and newlines): their field counts,
 * their widths up to the last field holding something, whether they are names, where each starts, and whether an
 * empty line (or a line of delimiters only) comes right before it. Empty lines are no records. Records end as
 * domain/files/lineEndings.ts says: \r\n, \n or a bare \r.
 */
export function recordsOf(
  text: string,
  delimiter: string,
  complete: boolean,
  maxRecords: number,
): SniffedRecord[] {
  const records: SniffedRecord[] = [];
  let fields = 1;
  let inQuotes = false;
  let recordHasContent = false;
  let start = 0;
  let blankBefore = false;
  let fieldStart = 0;
  // up to the last field holding something: its count, whether those are names, an empty field since then
  let filled = 0;
  let names = true;
  let emptySince = false;
  const endField = (end: number) => {
    const field = unquoted(text.slice(fieldStart, end));
    if (field === '') emptySince = true;
    else {
      // an empty field before this one: no header's names
      if (emptySince || !isName(field)) names = false;
      filled = fields;
      emptySince = false;
    }
    fieldStart = end + 1;
  };
  const endRecord = (end: number) => {
    endField(end);
    records.push({ width: filled, fields, start, afterBlank: blankBefore, names: names && filled > 0 });
  };
  for (let i = 0; i < text.length && records.length < maxRecords; i++) {
    const ch = text[i];
    if (inQuotes) {
      if (ch === '"') {
        if (text[i + 1] === '"') i++;
        else inQuotes = false;
      }
      continue;
    }
    if (ch === '\n' || ch === '\r') {
      if (!isLineBreak(text, i)) {
        fieldStart = i + 1; // the \n of a \r\n
        continue;
      }
      if (recordHasContent) endRecord(i);
      // a line with nothing on it is no record, and a line of delimiters only holds nothing: the next one follows
      // an empty line
      blankBefore = !recordHasContent || filled === 0;
      fields = 1;
      filled = 0;
      recordHasContent = false;
      fieldStart = i + 1;
      names = true;
      emptySince = false;
      continue;
    }
    if (!recordHasContent) start = i;
    recordHasContent = true;
    if (ch === '"') inQuotes = true;
    else if (ch === delimiter) {
      endField(i);
      fields++;
    }
  }
  // the last record counts only when the sample is the whole file (otherwise it may be cut)
  if (complete && !inQuotes && recordHasContent && records.length < maxRecords) endRecord(text.length);
  return records;
}

/** A field's text without its quotes (`""` inside them one `"`) and the spaces around it. */
function unquoted(raw: string): string {
  const field = raw.trim();
  return field.length >= 2 && field.startsWith('"') && field.endsWith('"')
    ? field.slice(1, -1).replace(/""/g, '"').trim()
    : field;
}

/**
 * A field (without its quotes and spaces: `unquoted`) a header's name could be: not empty and no number or date
 * (`12`, `-1.234,5`, `02.01.2026`, `2026-01-02`).
 */
function isName(field: string): boolean {
  return field !== '' && !/^[-+]?[\d.,:/ ]*\d[\d.,:/ ]*$/.test(field) && !/^\d{4}-\d\d-\d\d/.test(field);
}

function preferredDelimiters(name: string): Delimiter[] {
  const lower = name.toLowerCase();
  if (lower.endsWith('.tsv') || lower.endsWith('.tab')) return ['\t', ',', ';'];
  return [',', ';', '\t'];
}

interface DelimiterFit {
  delimiter: Delimiter;
  /** the header's field count */
  columns: number;
  /** share of the data records exactly as wide as the header (1 when there are none) */
  exact: number;
}

/**
 * How a delimiter splits the first records, or undefined when it does not make a table of them: the header (the
 * first record) needs at least two fields, and at least half the data records must hold the delimiter at all.
 * Data records may be ragged — shorter than the header (trailing cells left out: the report reads them as
 * nulls) or wider (the report keeps the cells beyond the header in generated columns, a counted warning) — so a
 * spreadsheet exported without its trailing empty cells is accepted. Prose with a comma in its first line but
 * not in most others is not a table.
 */
export function delimiterFit(counts: number[], delimiter: Delimiter): DelimiterFit | undefined {
  if (counts.length === 0 || counts[0] < 2) return undefined;
  const columns = counts[0];
  const data = counts.slice(1);
  if (data.length === 0) return { delimiter, columns, exact: 1 };
  if (data.filter((c) => c >= 2).length * 2 < data.length) return undefined;
  return { delimiter, columns, exact: data.filter((c) => c === columns).length / data.length };
}

/**
 * Decides from the first bytes what a file is. `complete` says the sample is the whole file.
 * XLSX is only a candidate here: its zip directory is checked once stored (domain/files/xlsx.ts).
 * Throws BadRequestError (400) naming what is wrong.
 */
export function sniff(sample: Buffer, complete: boolean, name: string, limits: SheetLimits): Sniffed {
  if (sample.length === 0) throw new BadRequestError('the file is empty');
  if (sample.subarray(0, 4).equals(ZIP_LOCAL_HEADER)) return { format: 'xlsx' };
  if (sample.subarray(0, 8).equals(OLE2)) {
    throw new BadRequestError(
      `${NOT_A_SPREADSHEET}; legacy .xls and password-protected workbooks are not supported (save as .xlsx)`,
    );
  }
  let text = sample.subarray(0, 3).equals(UTF8_BOM) ? sample.subarray(3) : sample;
  if (!complete) text = text.subarray(0, text.length - incompleteUtf8Tail(text));
  let encoding: TextEncoding = 'utf-8';
  let decoded: string;
  const utf16 = utf16ByBom(sample);
  if (utf16) {
    // a spreadsheet program's "Unicode text": UTF-16 after its byte order mark (a cut character left out)
    encoding = utf16;
    decoded = chunkDecoder(encoding).write(sample);
    if (decoded.includes('\u0000') || hasBinaryControl(Buffer.from(decoded, 'utf8'))) {
      throw new BadRequestError(NOT_A_SPREADSHEET);
    }
  } else if (!isUtf8(text)) {
    // text that is not UTF-8 is Windows-1252, unless it also holds UTF-8 sequences or starts with UTF-8's byte
    // order mark (a mix: refused); binary data is refused as such (the cut-off tail of a sample is only a UTF-8
    // question: read it whole)
    const bom = sample.subarray(0, 3).equals(UTF8_BOM);
    text = sample;
    if (!hasBinaryControl(text) && (bom || holdsUtf8Sequence(text)))
      throw new BadRequestError(MIXED_ENCODINGS);
    if (hasBinaryControl(text)) throw new BadRequestError(NOT_A_SPREADSHEET);
    encoding = eightBitEncoding(text);
    decoded = chunkDecoder(encoding).write(text);
  } else {
    if (hasBinaryControl(text)) throw new BadRequestError(NOT_A_SPREADSHEET);
    decoded = text.toString('utf8');
  }
  if (!complete && !hasLineBreak(decoded)) {
    throw new BadRequestError(`${NOT_A_SPREADSHEET}: no line break in the first ${SNIFF_BYTES} bytes`);
  }
  // Excel's separator line names the delimiter; the table starts on the next line
  const hint = separatorLine(decoded);
  let candidates = preferredDelimiters(name);
  if (hint) {
    const named = candidates.find((d) => d === hint.delimiter);
    if (!named) {
      throw new BadRequestError(
        `${NOT_A_SPREADSHEET}: its first line names ${JSON.stringify(hint.delimiter)} as the delimiter (sep=${hint.delimiter}); accepted are comma, semicolon and tab (sep=<tab>)`,
      );
    }
    candidates = [named];
    decoded = decoded.slice(hint.length);
  }
  // the first record as the header, as most files have it; a title or notes above the table only when no
  // delimiter makes a consistent table that way
  const better = <T extends DelimiterFit>(a: T | undefined, b: T | undefined) =>
    b && (!a || b.exact > a.exact || (b.exact === a.exact && b.columns > a.columns)) ? b : a;
  let plain: TableFit | undefined;
  let belowNotes: TableFit | undefined;
  const belowNotesBy = new Map<Delimiter, TableFit>();
  for (const delimiter of candidates) {
    const records = recordsOf(decoded, delimiter, complete, SNIFF_RECORDS + MAX_RECORDS_ABOVE);
    const first = delimiterFit(
      records.slice(0, SNIFF_RECORDS).map((r) => r.fields),
      delimiter,
    );
    plain = better(plain, first && { ...first, headerStart: 0 });
    const below = tableBelowNotes(records, delimiter);
    if (below) belowNotesBy.set(delimiter, below);
    belowNotes = better(belowNotes, below);
  }
  // a consistent table keeps its first record as header unless a table as consistent by the same delimiter
  // starts below it: its header wider (up to the last field holding something) than every record above it, which
  // the first record of a consistent table is only when it is padded with delimiters (`Title;;;;`, as Excel,
  // LibreOffice and Google Sheets export a title row above the table)
  const padded = plain && belowNotesBy.get(plain.delimiter);
  const best =
    plain && plain.exact >= CONSISTENT
      ? padded && padded.exact >= CONSISTENT
        ? padded
        : plain
      : belowNotes && (!plain || belowNotes.exact > plain.exact)
        ? belowNotes
        : plain;
  if (!best) {
    throw new BadRequestError(
      hint
        ? `${NOT_A_SPREADSHEET}: its first line names the ${DELIMITER_NAMES[candidates[0]]} as the delimiter (sep=${candidates[0] === '\t' ? '<tab>' : candidates[0]}), and the lines after it are no table of at least two columns by it`
        : `${NOT_A_SPREADSHEET}: no consistent delimiter (comma, semicolon or tab) with at least two columns`,
    );
  }
  if (best.columns > limits.maxColumns) {
    throw new BadRequestError(
      `the sheet has ${best.columns} columns; at most ${limits.maxColumns} are accepted`,
    );
  }
  return {
    format: best.delimiter === '\t' ? 'tsv' : 'csv',
    delimiter: best.delimiter,
    columns: best.columns,
    lineEndings: LINE_ENDINGS,
    encoding,
    ...(hint || best.headerStart > 0 ? linesAbove(decoded, best.headerStart, hint !== null) : {}),
  };
}

/**
 * The lines before a header starting at `headerStart` of `text` (the text after Excel's separator line, when
 * `separatorLine`: one more line, which Excel hides, so no row there).
 */
function linesAbove(
  text: string,
  headerStart: number,
  separatorLine: boolean,
): Pick<Sniffed, 'linesBeforeHeader' | 'headerRow'> {
  let breaks = 0;
  for (let i = 0; i < headerStart; i++) if (isLineBreak(text, i)) breaks++;
  return { linesBeforeHeader: breaks + (separatorLine ? 1 : 0), headerRow: breaks + 1 };
}

/** How many records may come before the header (a title, notes): a table found after more is not taken. */
export const MAX_RECORDS_ABOVE = 10;
/** the share of the records after a header below a title or notes that must be exactly as wide as it */
const CONSISTENT = 0.8;

export interface TableFit extends DelimiterFit {
  /** where the header starts in the text (0: the first record is the header) */
  headerStart: number;
}

/**
 * The first of `rows` after the first that can be a table's header below a title or notes (at most
 * `MAX_RECORDS_ABOVE` rows in) and for which `fits` holds (the rows after it make a table with it): at least two
 * wide, all names, every row above it narrower, and either each of those one wide (a title, no delimiter in it)
 * or an empty line or blank row right above it. Undefined when none can.
 */
function headerBelowNotes(rows: RowShape[], fits: (h: number) => boolean): number | undefined {
  for (let h = 1; h <= MAX_RECORDS_ABOVE && h < rows.length - 1; h++) {
    const { width } = rows[h];
    const above = rows.slice(0, h);
    if (width < 2 || !rows[h].names || above.some((r) => r.width >= width)) continue;
    if (!rows[h].afterBlank && above.some((r) => r.width > 1)) continue;
    if (fits(h)) return h;
  }
  return undefined;
}

/**
 * A table below a title or notes, as many reports and bank statements exported as CSV have: its header is the
 * record `headerBelowNotes` finds with at least 80% of the records after it exactly as wide. The sniff takes it
 * only when no delimiter makes a table as consistent with the first record as header; a header narrower than
 * its rows without an empty line before it stays the header (ragged rows, as before).
 */
export function tableBelowNotes(records: SniffedRecord[], delimiter: Delimiter): TableFit | undefined {
  const counts = records.map((r) => r.fields);
  const fitAt = (h: number) => delimiterFit(counts.slice(h, h + SNIFF_RECORDS), delimiter);
  const h = headerBelowNotes(records, (k) => (fitAt(k)?.exact ?? 0) >= CONSISTENT);
  return h === undefined ? undefined : { ...fitAt(h)!, headerStart: records[h].start };
}

/** the cell types of text: a shared string, a formula's string, an inline string (xlsxRead.ts SheetCell.type) */
export const TEXT_CELL_TYPES: ReadonlySet<string> = new Set(['s', 'str', 'inlineStr']);

/** How many of a sheet's first rows holding something `sheetHeaderIndex` needs to judge them. */
export const SHEET_HEADER_SAMPLE = MAX_RECORDS_ABOVE + 1 + SNIFF_RECORDS;

/**
 * Which of a worksheet's first rows holding something is its header (their shapes, in order; at most
 * `SHEET_HEADER_SAMPLE`): the first when at least 80% of the rows after it are at most as wide (a row leaves
 * its trailing empty cells out); else, as a CSV's (`tableBelowNotes`), a row below a title or notes
 * (`headerBelowNotes`: names are text cells) with 80% of the rows after it at most as wide; else the first.
 */
export function sheetHeaderIndex(rows: RowShape[]): number {
  const fits = (h: number) => {
    const after = rows.slice(h + 1, h + 1 + SNIFF_RECORDS);
    return (
      after.length > 0 && after.filter((r) => r.width <= rows[h].width).length >= CONSISTENT * after.length
    );
  };
  if (rows.length < 2 || fits(0)) return 0;
  return headerBelowNotes(rows, fits) ?? 0;
}

/**
 * A worksheet's first rows holding something, gathered as they are read until they tell which is the header
 * (`sheetHeaderIndex`) — the report's loader and the preview fill it alike, each with what it keeps of a row
 * (`item`).
 */
export class SheetHeaderSample<T> {
  readonly rows: Array<RowShape & { number: number; item: T }> = [];
  private blankSince = false;

  /** a row holding nothing: the next one holding something comes after a blank row */
  blank(): void {
    this.blankSince = true;
  }

  /** a row holding something (`number`: its row in the sheet; a gap before it is blank rows) */
  add(number: number, width: number, names: boolean, item: T): void {
    const last = this.rows[this.rows.length - 1];
    const afterBlank = last !== undefined && (this.blankSince || number > last.number + 1);
    this.rows.push({ number, width, names, afterBlank, item });
    this.blankSince = false;
  }

  /** enough rows to decide */
  get full(): boolean {
    return this.rows.length >= SHEET_HEADER_SAMPLE;
  }

  /** the header's index in `rows` (0 when there are none) */
  headerIndex(): number {
    return sheetHeaderIndex(this.rows);
  }
}
