import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import { isMissingObject } from '../../../common/storage';
import { tableText } from '../../files/tableText';
import { headerNames, type HeaderCell } from '../../files/headerNames';
import { BadRequestError } from '../../../common/errors';
import { UnreadableFileError } from '../../files/unreadable';
import { inspectionFailureReason, inspectXlsxFile, NotAWorkbookError } from '../../files/xlsx';
import { CANNOT_READ, readSheetRows, type SheetCell } from '../../files/xlsxRead';
import { SheetHeaderSample, TEXT_CELL_TYPES } from '../../files/sniff';
import { clockText, DAY_MS, isoCellDate, serialClockText, serialDate } from '../../files/xlsxDates';
import { BLANK_MARK, downloadChecked, normalizeText, splitRecord } from './csvText';
import {
  cellNotation,
  classSql,
  errorValueSql,
  literal,
  notationCellSql,
  withoutErrors,
  type CellNotation,
} from './sql';
import {
  AnalysisFailure,
  type LoadedColumn,
  type LoadedSheet,
  type LoadedVersion,
  type LoadOptions,
  type LoadProgress,
  type DownloadedText,
  type LoadSource,
  type LoadWarning,
} from './types';
import { openWorkbook, type LoaderWorkbook } from './xlsxBook';

export const ROW_NUMBER_COLUMN = 'row_number';
/**
 * The row number of the fast path's first data row when nothing is shown above the header: the fast path only
 * takes texts whose header is their first line (no blank lines, no BOM), so data rows start at 2; a title or
 * notes a spreadsheet shows above it (`LoadSource.headerRow`) move them down (`LoadedSheet.firstRow`).
 */
export const LAZY_FIRST_ROW = 2;
const PROGRESS_EVERY_MS = 250;
/** The longest CSV/TSV record (line, or lines of one quoted record) the reader accepts. */
export const MAX_RECORD_BYTES = 2 * 1024 * 1024;

/** A version whose stored object is gone (removed from the store): it cannot be analysed, never retried. */
export function fileMissing(): AnalysisFailure {
  return new AnalysisFailure('file_missing', 'the stored file of the version is missing');
}

/** The source's stream; a stored object that is not there fails with `file_missing`. */
async function openSource(source: Pick<LoadSource, 'open'>): Promise<Readable> {
  try {
    return await source.open();
  } catch (err) {
    if (isMissingObject(err)) throw fileMissing();
    throw err;
  }
}

/** A source read from a local file. */
export function fileSource(filePath: string, rest: Omit<LoadSource, 'open'>): LoadSource {
  return { ...rest, open: async () => createReadStream(filePath, { highWaterMark: 1024 * 1024 }) };
}

/**
 * A CSV/TSV source downloaded to a new file of `workDir`, checked on the way (`downloadChecked`). A caller may
 * start it early and hand it to the load as `LoadSource.downloaded` (a comparison downloads while DuckDB
 * starts); the load then owns the file. The file is removed when the download fails.
 */
export async function downloadText(
  source: Pick<LoadSource, 'open' | 'encoding' | 'linesBeforeHeader'>,
  workDir: string,
  onBytes: (bytes: number) => void,
  signal?: AbortSignal,
): Promise<DownloadedText> {
  const download = path.join(workDir, `load-${randomUUID()}.raw`);
  try {
    const raw = await openSource(source);
    // the copy is UTF-8 (domain/files/encoding.ts) from the header on (domain/files/tableText.ts); progress
    // counts the object's own bytes
    const stream = tableText(raw, source.encoding, source.linesBeforeHeader);
    let rawBytes = 0;
    if (stream !== raw) raw.on('data', (chunk: Buffer) => void (rawBytes += chunk.length));
    const counted = stream === raw ? onBytes : () => onBytes(rawBytes);
    try {
      return { path: download, facts: await downloadChecked(stream, download, counted, signal) };
    } finally {
      stream.destroy();
    }
  } catch (err) {
    await rm(download, { force: true });
    throw err;
  }
}

function ident(position: number): string {
  return `"c${position}"`;
}

function columnsOf(names: string[]): LoadedColumn[] {
  return names.map((name, i) => ({ name, position: i + 1, ident: ident(i + 1) }));
}

/** What a sheet's header had above it, read past but never silently (`lines_before_header`). */
function linesBeforeHeader(count: number, what: string): LoadWarning {
  return { code: 'lines_before_header', count, message: `${count} ${what} are not part of the table` };
}

function headerWarnings(raw: ReadonlyArray<HeaderCell>, width: number): LoadWarning[] {
  const warnings: LoadWarning[] = [];
  let blank = 0;
  const seen = new Set<string>();
  let repeated = 0;
  for (let i = 0; i < width; i++) {
    const cell = raw[i];
    const text = cell === null || cell === undefined ? '' : String(cell);
    if (text.trim() === '') blank++;
    else if (seen.has(text)) repeated++;
    else seen.add(text);
  }
  if (blank > 0) {
    warnings.push({
      code: 'blank_header_cells',
      count: blank,
      message: `${blank} column(s) have no header name and are called "column N"`,
    });
  }
  if (repeated > 0) {
    warnings.push({
      code: 'repeated_header_names',
      count: repeated,
      message: `${repeated} header name(s) repeat an earlier one and get a suffix " (2)", " (3)", …`,
    });
  }
  return warnings;
}

class Progress {
  private last = 0;
  readonly state: LoadProgress;
  constructor(
    total: number,
    private readonly report?: (p: LoadProgress) => void,
  ) {
    this.state = { rowsRead: 0, bytesRead: 0, bytesTotal: total };
  }
  tick(force = false): void {
    if (!this.report) return;
    const now = Date.now();
    if (!force && now - this.last < PROGRESS_EVERY_MS) return;
    this.last = now;
    this.report({ ...this.state });
  }
}

/**
 * DuckDB's reader of the copy, every column VARCHAR (an empty cell is NULL), short rows padded with NULLs;
 * with a `notation` (sql.ts `cellNotation`), a subquery that reads its numbers and dates as the type rules do.
 */
function readCsvSql(
  copy: string,
  delimiter: string,
  notation: CellNotation | null,
  columns: LoadedColumn[],
  strict: boolean,
  parallel = true,
  bufferBytes?: number,
): string {
  const spec = columns.map((c) => `${literal(c.ident.slice(1, -1))}: 'VARCHAR'`).join(', ');
  const buffer = bufferBytes ? `, buffer_size=${bufferBytes}` : '';
  const read = `read_csv(${literal(copy)}, delim=${literal(delimiter)}, quote='"', escape='"', header=true,
    auto_detect=false, columns={${spec}}, null_padding=true, strict_mode=${strict}, max_line_size=${MAX_RECORD_BYTES},
    ignore_errors=false, parallel=${parallel}${buffer})`;
  if (!notation) return read;
  return `(SELECT ${columns.map((c) => `${notationCellSql(c.ident, notation)} AS ${c.ident}`).join(', ')} FROM ${read})`;
}

/**
 * The cells of a loaded CSV/TSV table holding a spreadsheet's error value (sql.ts `ERROR_VALUES`) made null and
 * counted in the warning `unreadable_cells`, as an XLSX error cell is: one scan counts them per column, then only
 * the columns holding one are updated.
 */
async function nullErrorValues(
  conn: DuckDBConnection,
  table: string,
  columns: LoadedColumn[],
  warnings: LoadWarning[],
): Promise<void> {
  if (columns.length === 0) return;
  const counts = await conn.runAndReadAll(
    `SELECT ${columns.map((c) => `count(*) FILTER (WHERE ${errorValueSql(c.ident)})::BIGINT`).join(', ')} FROM ${table}`,
  );
  const perColumn = (counts.getRows()[0] ?? []).map((n) => Number(n));
  let total = 0;
  for (const [i, column] of columns.entries()) {
    if (!(perColumn[i] > 0)) continue;
    total += perColumn[i];
    await conn.run(`UPDATE ${table} SET ${column.ident} = NULL WHERE ${errorValueSql(column.ident)}`);
  }
  if (total > 0) {
    warnings.push({
      code: 'unreadable_cells',
      count: total,
      message: `${total} cell(s) hold a spreadsheet error value (#DIV/0!, #VALUE!, …) and count as null`,
    });
  }
}

/** Creates `table` from the copy (row numbers from `firstRow`), with DuckDB's progress polled as rows. */
async function createFromCsv(
  conn: DuckDBConnection,
  table: string,
  read: string,
  firstRow: number,
  expectedRows: number,
  opts: LoadOptions,
  progress: Progress,
): Promise<void> {
  const polling = setInterval(() => {
    // DuckDB's own progress of the read, as rows of the file
    const p = conn.progress;
    if (p.percentage > 0 && expectedRows > 0) {
      progress.state.rowsRead = Math.floor((expectedRows * Math.min(100, p.percentage)) / 100);
      progress.tick();
    }
  }, PROGRESS_EVERY_MS);
  const abort = () => conn.interrupt();
  opts.signal?.addEventListener('abort', abort);
  try {
    // the rows in file order (DuckDB keeps the insertion order of its parallel read), then each row's
    // number from its position: cheaper than a row_number() window over the read
    await conn.run(`CREATE TABLE ${table} AS SELECT * FROM ${read}`);
    await conn.run(`ALTER TABLE ${table} ADD COLUMN ${ROW_NUMBER_COLUMN} BIGINT`);
    await conn.run(`UPDATE ${table} SET ${ROW_NUMBER_COLUMN} = rowid + ${firstRow}`);
  } finally {
    clearInterval(polling);
    opts.signal?.removeEventListener('abort', abort);
  }
}

/**
 * `lazy` loads (comparisons): `table` becomes a view over DuckDB's strict reader of the download, row
 * numbers in the reader's order (as `createFromCsv` numbers them). One pass checks that the whole file
 * reads in strict mode, counts its rows and, with `classify`, records each column's classes; null when
 * that pass fails (the caller takes the normalising path, nothing dropped).
 */
async function lazyView(
  conn: DuckDBConnection,
  table: string,
  download: string,
  delimiter: string,
  notation: CellNotation | null,
  columns: LoadedColumn[],
  /** the first data row's number (`LoadedSheet.firstRow`) */
  firstRow: number,
  opts: LoadOptions,
  progress: Progress,
): Promise<Omit<LoadedSheet, 'name' | 'warnings'> | null> {
  // buffers of two records' length rather than DuckDB's default 16: the view is read several times, by
  // two threads, next to the other version's (measured: ~15 MB less per scan of a 25 MB file, no slower)
  const read = readCsvSql(download, delimiter, notation, columns, true, true, 2 * MAX_RECORD_BYTES);
  const classify = await opts.classify;
  const rawTable = `${table}_raw`;
  const views = async () => {
    await conn.run(
      `CREATE OR REPLACE VIEW ${table} AS SELECT (row_number() OVER () + ${firstRow - 1})::BIGINT AS ${ROW_NUMBER_COLUMN}, * FROM ${read}`,
    );
    await conn.run(`CREATE OR REPLACE VIEW ${rawTable} AS SELECT * FROM ${read}`);
  };
  if (!classify && opts.skipCheck) {
    // the caller's first pass checks and counts it (LoadedSheet.unchecked)
    await views();
    return {
      index: 0,
      table,
      rowCount: -1,
      rowNumberColumn: ROW_NUMBER_COLUMN,
      columns,
      unchecked: true,
      rawTable,
      firstRow,
    };
  }
  const classes = classify
    ? columns.map((c, i) => `, bit_or(1::INTEGER << ${classSql(c.ident)}) AS k${i}`).join('')
    : // every column read, so that a malformed line anywhere fails the check
      columns.map((c, i) => `, max(length(${c.ident})) AS k${i}`).join('');
  const abort = () => conn.interrupt();
  opts.signal?.addEventListener('abort', abort);
  let row: Record<string, unknown>;
  try {
    const r = await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n${classes} FROM ${read}`);
    row = r.getRowObjectsJS()[0] as Record<string, unknown>;
  } catch {
    if (opts.signal?.aborted) throw opts.signal.reason;
    return null;
  } finally {
    opts.signal?.removeEventListener('abort', abort);
  }
  const rows = Number(row.n);
  if (rows > opts.maxRows) throw tooManyRows(rows, opts);
  await views();
  progress.state.rowsRead += rows;
  progress.tick(true);
  return {
    index: 0,
    table,
    rowCount: rows,
    rowNumberColumn: ROW_NUMBER_COLUMN,
    columns,
    rawTable,
    firstRow,
    ...(classify ? { classes: columns.map((_, i) => Number(row[`k${i}`] ?? 0)) } : {}),
  };
}

async function countRows(conn: DuckDBConnection, table: string): Promise<number> {
  const count = await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${table}`);
  return Number(count.getRowObjectsJson()[0].n);
}

function tooManyColumns(width: number, opts: LoadOptions): AnalysisFailure {
  return new AnalysisFailure(
    'too_many_columns',
    `a row has ${width} cells; at most ${opts.maxColumns} columns are accepted`,
  );
}

export function tooManyRows(rows: number, opts: Pick<LoadOptions, 'maxRows'>): AnalysisFailure {
  return new AnalysisFailure(
    'too_many_rows',
    `the sheet has ${rows} rows; at most ${opts.maxRows} are accepted`,
  );
}

async function loadText(
  conn: DuckDBConnection,
  source: LoadSource,
  opts: LoadOptions,
  progress: Progress,
): Promise<LoadedSheet[]> {
  const delimiter = source.delimiter ?? (source.format === 'tsv' ? '\t' : ',');
  const copy = path.join(opts.workDir, `load-${randomUUID()}.csv`);
  const table = `${opts.tablePrefix ?? ''}sheet_0`;
  const sheetName = source.format === 'tsv' ? 'TSV' : 'CSV';
  // 1. the object, downloaded once to a local file (by the caller already, `source.downloaded`); Buffer-level
  // checks tell whether DuckDB can read it as it is (the fast path) or the normalising pass must write a copy
  const downloading =
    source.downloaded ??
    downloadText(
      source,
      opts.workDir,
      (bytes) => {
        progress.state.bytesRead = bytes;
        progress.tick();
      },
      opts.signal,
    );
  let downloadPath: string | undefined; // removed at the end unless kept
  let keep = false; // a lazy view reads the download: it stays in workDir
  try {
    const downloaded = await downloading;
    const download = downloaded.path;
    downloadPath = download;
    let facts;
    facts = downloaded.facts;
    // how its numbers are written (the normalising pass keeps the download's quotes)
    const notation = cellNotation(delimiter, downloaded.facts);
    // rows a spreadsheet shows above the header (a title, notes: the version's headerRow − 1): the data rows'
    // numbers follow them, as it shows them
    const above = Math.max(0, (source.headerRow ?? 1) - 1);
    // the fast path's first data row: the header is the text's first line
    const plainFirstRow = LAZY_FIRST_ROW + above;
    progress.state.bytesRead = source.sizeBytes;

    // 2. the fast path: DuckDB's parallel reader on the download, in strict mode, so a row wider than the
    // header, a quote never closed or a quoted line break (with padding) is an error that sends the file
    // down the normalising path instead (nothing is dropped)
    if (facts.plain) {
      const header = splitRecord(facts.headerLine, delimiter);
      const width = header.length;
      if (width <= opts.maxColumns) {
        const columns = columnsOf(headerNames(header, width));
        if (opts.lazy) {
          const sheet = await lazyView(
            conn,
            table,
            download,
            delimiter,
            notation,
            columns,
            plainFirstRow,
            opts,
            progress,
          );
          if (sheet) {
            keep = true;
            return [
              {
                ...sheet,
                name: sheetName,
                warnings: headerWarnings(header, width),
                download: { path: download, facts: downloaded.facts },
                ...(downloaded.facts.quoteFree ? { lines: { path: download, delimiter, notation } } : {}),
              },
            ];
          }
        }
        let loaded = false;
        try {
          await createFromCsv(
            conn,
            table,
            readCsvSql(download, delimiter, withoutErrors(notation), columns, true),
            plainFirstRow,
            0,
            opts,
            progress,
          );
          loaded = true;
        } catch {
          if (opts.signal?.aborted) throw opts.signal.reason;
          await conn.run(`DROP TABLE IF EXISTS ${table}`);
        }
        if (loaded) {
          const rows = await countRows(conn, table);
          if (rows > opts.maxRows) throw tooManyRows(rows, opts);
          const warnings = headerWarnings(header, width);
          if (notation?.errors) await nullErrorValues(conn, table, columns, warnings);
          progress.state.rowsRead += rows;
          progress.tick(true);
          return [
            {
              name: sheetName,
              index: 0,
              table,
              rowCount: rows,
              rowNumberColumn: ROW_NUMBER_COLUMN,
              columns,
              warnings,
            },
          ];
        }
      }
    }

    // 3. the normalising pass over the download (BOM, bare CR, blank lines kept as rows, the widest row)
    const local = createReadStream(download, { highWaterMark: 1024 * 1024 });
    try {
      facts = await normalizeText(local, copy, delimiter, () => undefined, opts.signal);
    } finally {
      local.destroy();
    }
    if (facts.unterminatedQuote) {
      throw new AnalysisFailure('unparsable_file', 'the file ends inside a quoted field');
    }
    const width = Math.max(facts.maxFields, facts.header.length);
    if (width > opts.maxColumns) throw tooManyColumns(width, opts);
    if (facts.dataRows > opts.maxRows) throw tooManyRows(facts.dataRows, opts);
    const names = headerNames(facts.header, width);
    const columns = columnsOf(names);
    const warnings = headerWarnings(facts.header, width);
    if (facts.widerRows > 0) {
      warnings.push({
        code: 'rows_wider_than_header',
        count: facts.widerRows,
        message: `${facts.widerRows} row(s) have more cells than the header; the extra cells are in columns "column N"`,
      });
    }
    // the header is row leadingBlankRows + 1 of the text (after the rows a spreadsheet shows above it)
    const firstRow = above + facts.leadingBlankRows + 2;
    if (facts.dataRows === 0 || width === 0) {
      await conn.run(
        `CREATE TABLE ${table} (${ROW_NUMBER_COLUMN} BIGINT${columns.map((c) => `, ${c.ident} VARCHAR`).join('')})`,
      );
    } else {
      // DuckDB's parallel reader refuses padded short rows together with quoted line breaks: then the
      // file is read again by one thread
      let read = false;
      for (const parallel of [true, false]) {
        try {
          await createFromCsv(
            conn,
            table,
            readCsvSql(copy, delimiter, withoutErrors(notation), columns, false, parallel),
            firstRow,
            facts.dataRows,
            opts,
            progress,
          );
          read = true;
          break;
        } catch {
          if (opts.signal?.aborted) throw opts.signal.reason;
          await conn.run(`DROP TABLE IF EXISTS ${table}`);
        }
      }
      if (!read) {
        throw new AnalysisFailure(
          'unparsable_file',
          `the file cannot be read as ${source.format.toUpperCase()}`,
        );
      }
      // blank lines were written as one-cell rows holding the mark: make them rows of nulls
      await conn.run(`UPDATE ${table} SET c1 = NULL WHERE c1 = ${literal(BLANK_MARK)}`);
      const loadedRows = await countRows(conn, table);
      if (loadedRows !== facts.dataRows) {
        throw new AnalysisFailure(
          'unparsable_file',
          `the file has ${facts.dataRows} rows but ${loadedRows} could be read as ${source.format.toUpperCase()}`,
        );
      }
      if (notation?.errors) await nullErrorValues(conn, table, columns, warnings);
    }
    progress.state.rowsRead += facts.dataRows;
    progress.tick(true);
    return [
      {
        name: sheetName,
        index: 0,
        table,
        rowCount: facts.dataRows,
        rowNumberColumn: ROW_NUMBER_COLUMN,
        columns,
        warnings,
      },
    ];
  } finally {
    await rm(copy, { force: true });
    if (!keep && downloadPath) await rm(downloadPath, { force: true });
  }
}

/** `YYYY-MM-DD` of recent days (a date column repeats few days); cleared when it grows large */
const dayTexts = new Map<number, string>();

/**
 * A date without a time of day as `YYYY-MM-DD`; otherwise `YYYY-MM-DD HH:MM:SS[.fff]` (UTC, as stored).
 * The day's text is computed once per day and cached, the time of day from the milliseconds.
 */
export function dateText(value: Date): string {
  const t = value.getTime();
  const day = Math.floor(t / DAY_MS);
  let ymd = dayTexts.get(day);
  if (ymd === undefined) {
    const iso = value.toISOString(); // …THH:MM:SS.fffZ: the last 14 characters are the time of day
    ymd = iso.slice(0, iso.length - 14);
    if (dayTexts.size >= 100_000) dayTexts.clear();
    dayTexts.set(day, ymd);
  }
  const ms = t - day * DAY_MS;
  return ms === 0 ? ymd : `${ymd} ${clockText(ms)}`;
}

/** An ISO 8601 date cell's text as a date-formatted number cell's loads (dateText), or as written when no date. */
function isoCellText(v: string): string {
  const date = isoCellDate(v);
  return Number.isNaN(date.getTime()) ? v : dateText(date);
}

/** Returned by `sheetCellText` for an unreadable cell (an error value, a formula without a cached result). */
const UNREADABLE = Symbol('unreadable');

/** Between the cells of a staged row. */
const CELL_SEP = '\u001f';
/** A null cell of a staged row (an empty cell stays the empty text). */
const NULL_CELL = '\u001e';
const STAGING_CHARS = /[\u001e\u001f]/;

/**
 * Rows of one worksheet into its table. Each row is staged as one text (its cells joined by CELL_SEP, a null
 * cell as NULL_CELL) through the appender, and `finish` splits the staged rows into the table's columns in one
 * statement: one call into DuckDB per row instead of one per cell (measured: about a second less for 270k
 * rows × 12). A row with a cell that holds either character is staged cell by cell in a second table, and
 * a blank row (or a row of null cells) as a NULL text. Blank rows are staged only before a row that follows
 * them (`row`), so a sheet never ends in blank rows.
 */
class SheetWriter {
  private lines: DuckDBAppender | undefined;
  private cells: DuckDBAppender | undefined;
  width = 0;
  rows = 0;
  /** rows staged cell by cell (a cell held CELL_SEP or NULL_CELL) */
  private odd = 0;
  unreadable = 0;
  header: Array<string | null> | undefined;
  headerRow = 0;
  constructor(
    private readonly conn: DuckDBConnection,
    readonly table: string,
    private readonly maxColumns: number,
    private readonly maxRows: number,
  ) {}

  private get staged(): string {
    return `${this.table}_staged`;
  }
  private get stagedCells(): string {
    return `${this.table}_staged_cells`;
  }

  async create(): Promise<void> {
    await this.conn.run(`CREATE TABLE ${this.staged} (n BIGINT, line VARCHAR)`);
    await this.conn.run(`CREATE TABLE ${this.stagedCells} (n BIGINT, position INTEGER, v VARCHAR)`);
    this.lines = await this.conn.createAppender(this.staged);
    this.cells = await this.conn.createAppender(this.stagedCells);
  }

  /** the sheet is at least `width` columns wide */
  widen(width: number): void {
    if (width > this.maxColumns) {
      throw new AnalysisFailure(
        'too_many_columns',
        `a worksheet has ${width} columns; at most ${this.maxColumns} are accepted`,
      );
    }
    this.width = width;
  }

  /**
   * appends a row that holds something, after the blank rows since the last one (the caller widens the
   * sheet first when the row is wider: `widen`); returns the rows appended. Blank rows are appended only
   * here, before a row that follows them, so blank rows at the end of a sheet are never rows
   */
  row(number: number, cells: Array<string | null>): number {
    // rows missing (or holding nothing) between two rows are blank rows: kept as rows of nulls
    const first = this.headerRow + 1 + this.rows;
    const blanks = Math.max(0, number - first);
    if (this.rows + blanks + 1 > this.maxRows) {
      throw new AnalysisFailure(
        'too_many_rows',
        `a worksheet has more than ${this.maxRows} rows; at most ${this.maxRows} are accepted`,
      );
    }
    for (let blank = first; blank < number; blank++) this.append(blank, []);
    let plain = true;
    for (const text of cells) if (text !== null && STAGING_CHARS.test(text)) plain = false;
    if (plain) this.append(number, cells);
    else this.appendCells(number, cells);
    return blanks + 1;
  }

  private append(number: number, cells: Array<string | null>): void {
    const a = this.lines!;
    a.appendBigInt(BigInt(number));
    if (cells.length === 0) a.appendNull();
    else {
      const texts = new Array<string>(cells.length);
      for (let c = 0; c < cells.length; c++) texts[c] = cells[c] ?? NULL_CELL;
      a.appendVarchar(texts.join(CELL_SEP));
    }
    a.endRow();
    this.rows++;
  }

  private appendCells(number: number, cells: Array<string | null>): void {
    const a = this.cells!;
    for (let c = 0; c < cells.length; c++) {
      const text = cells[c];
      if (text === null) continue;
      a.appendBigInt(BigInt(number));
      a.appendInteger(c + 1);
      a.appendVarchar(text);
      a.endRow();
    }
    this.odd++;
    this.rows++;
  }

  /** the sheet's table from the staged rows (row number, then each column's text), in row order */
  async finish(): Promise<void> {
    this.close();
    const columns = Array.from({ length: this.width }, (_, i) => i + 1);
    const split = columns
      .map((c) => `, CASE WHEN s[${c}] <> ${literal(NULL_CELL)} THEN s[${c}] END AS ${ident(c)}`)
      .join('');
    let select = `SELECT n AS ${ROW_NUMBER_COLUMN}${split}
      FROM (SELECT n, string_split(line, ${literal(CELL_SEP)}) AS s FROM ${this.staged})`;
    if (this.odd > 0) {
      const pivot = columns.map((c) => `, max(v) FILTER (WHERE position = ${c}) AS ${ident(c)}`).join('');
      select = `SELECT * FROM (${select} UNION ALL
        SELECT n AS ${ROW_NUMBER_COLUMN}${pivot} FROM ${this.stagedCells} GROUP BY n) ORDER BY ${ROW_NUMBER_COLUMN}`;
    }
    await this.conn.run(`CREATE TABLE ${this.table} AS ${select}`);
    await this.conn.run(`DROP TABLE ${this.staged}`);
    await this.conn.run(`DROP TABLE ${this.stagedCells}`);
  }

  /** closes the appenders (the staged tables go with the engine when the load fails) */
  close(): void {
    for (const a of [this.lines, this.cells]) {
      if (!a) continue;
      a.flushSync();
      a.closeSync();
    }
    this.lines = undefined;
    this.cells = undefined;
  }
}

/**
 * Whether a number cell's text is already the text JavaScript writes for its number (String(Number(v)) === v),
 * so it is taken as it is, without a conversion each way (most cells: writers store numbers so): an optional
 * minus, an integer part without leading zeros (or 0), an optional fraction that ends in a digit other than 0,
 * at most 15 digits in all (each such decimal is a double of its own, whose shortest text is the decimal
 * itself), and nothing below 0.000001 (written with an exponent). Anything else goes through the conversion.
 */
export function plainDecimal(v: string): boolean {
  const length = v.length;
  const start = length > 0 && v.charCodeAt(0) === 45 ? 1 : 0; // -
  let digits = 0;
  let dot = -1;
  for (let i = start; i < length; i++) {
    const code = v.charCodeAt(i);
    if (code >= 48 && code <= 57) digits++;
    else if (code === 46 && dot < 0 && i > start) dot = i;
    else return false;
  }
  if (digits === 0 || digits > 15) return false;
  if (dot >= 0 && (dot === length - 1 || v.charCodeAt(length - 1) === 48)) return false; // 1. or 1.50
  if (v.charCodeAt(start) !== 48) return true;
  if (dot < 0) return start === 0 && length === 1; // 0, not -0 (written 0) or 007
  if (dot !== start + 1) return false;
  let zeros = 0;
  while (v.charCodeAt(dot + 1 + zeros) === 48) zeros++;
  return zeros <= 5; // 0.000001 is written so, 0.0000001 as 1e-7
}

/**
 * A worksheet cell's text as the report reads it (a date-formatted number and an ISO 8601 date cell as dateText,
 * a number formatted as a time of day alone or a duration as its clock text (serialClockText), a boolean as true
 * or false, a number as JavaScript writes it), null when it holds nothing, UNREADABLE for an
 * error value or a formula without a saved result. A formula's saved result reads as a cell of its type.
 */
function sheetCellText(c: SheetCell, book: LoaderWorkbook): string | null | typeof UNREADABLE {
  switch (c.type) {
    case 'inlineStr':
      return c.inline === '' ? null : c.inline;
    case 'e':
      return UNREADABLE;
  }
  if (!c.hasValue) return c.formula ? UNREADABLE : null;
  switch (c.type) {
    case 's': {
      const text = book.strings[Number(c.v)];
      return text === undefined || text === '' ? null : text;
    }
    case 'str':
      return c.v === '' ? null : c.v;
    case 'b': {
      const v = c.v.trim();
      return v === '' ? null : v === '1' || v === 'true' ? 'true' : 'false';
    }
    case 'd':
      return c.v.trim() === '' ? null : isoCellText(c.v);
    default: {
      const dated = book.dates.get(c.style);
      if (!dated && plainDecimal(c.v)) return c.v;
      if (c.v.trim() === '') return null;
      const n = Number(c.v);
      if (!Number.isFinite(n)) return UNREADABLE;
      if (!dated) return String(n);
      // a time of day alone or a duration as the sheet shows it (text: there is no time type)
      const clock = serialClockText(n, dated);
      if (clock !== null) return clock;
      const date = serialDate(n, book.date1904);
      return Number.isNaN(date.getTime()) ? UNREADABLE : dateText(date);
    }
  }
}

async function loadXlsx(
  conn: DuckDBConnection,
  source: LoadSource,
  opts: LoadOptions,
  progress: Progress,
): Promise<LoadedSheet[]> {
  // the workbook is read from a copy in the work folder (its zip directory first: ./xlsxBook.ts), removed after
  const copy = path.join(opts.workDir, `load-${randomUUID()}.xlsx`);
  const sheets: LoadedSheet[] = [];
  const writers: SheetWriter[] = [];
  try {
    // the copy exists before a byte comes (a stream opening it on its own could create it after a failed
    // download's clean-up below)
    const out = (await open(copy, 'w')).createWriteStream();
    const stream: Readable = await openSource(source).catch((err: unknown) => {
      out.destroy();
      throw err;
    });
    stream.on('data', (chunk: Buffer) => {
      progress.state.bytesRead += chunk.length;
    });
    // a download that fails (storage unreachable mid-way) is no unreadable file: its error goes on as it is,
    // and the activity's retry policy tries again
    await pipeline(stream, out, { signal: opts.signal });
    progress.tick(true);
    if (opts.xlsxLimits) {
      // the upload's guards on the copy about to be read (one download for both)
      try {
        await inspectXlsxFile(copy, opts.xlsxLimits);
      } catch (err) {
        if (!(err instanceof BadRequestError)) throw err;
        // no workbook at all (unparsable_file) in the reader's words, as when the reader finds it; a guard in the
        // upload's words
        const message = err instanceof NotAWorkbookError ? `${CANNOT_READ}: ${err.detail}` : err.message;
        throw new AnalysisFailure(inspectionFailureReason(err), message);
      }
    }
    await readSheets(conn, copy, opts, progress, sheets, writers);
  } finally {
    for (const w of writers) {
      try {
        w.close();
      } catch {
        // the table goes with the engine
      }
    }
    await rm(copy, { force: true });
  }
  progress.state.bytesRead = source.sizeBytes;
  progress.tick(true);
  if (sheets.length === 0) throw new AnalysisFailure('unparsable_file', 'the workbook has no worksheet');
  return sheets;
}

/** Each worksheet of the workbook copy into its table (`sheets`), each table's writer in `writers`. */
async function readSheets(
  conn: DuckDBConnection,
  copy: string,
  opts: LoadOptions,
  progress: Progress,
  sheets: LoadedSheet[],
  writers: SheetWriter[],
): Promise<void> {
  let book: LoaderWorkbook | undefined;
  try {
    book = await openWorkbook(copy, opts.xlsxLimits?.maxEntries ?? 100_000);
    for (const { name, part } of book.sheets) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      const index = sheets.length;
      const writer = new SheetWriter(
        conn,
        `${opts.tablePrefix ?? ''}sheet_${index}`,
        opts.maxColumns,
        opts.maxRows,
      );
      writers.push(writer);
      await writer.create();
      let nextTick = progress.state.rowsRead + 1024;
      const workbook = book;
      /** a data row (the header known): into the table */
      const take = (number: number, cells: Array<string | null>) => {
        if (cells.length > writer.width) writer.widen(cells.length);
        progress.state.rowsRead += writer.row(number, cells);
        if (progress.state.rowsRead >= nextTick) {
          nextTick = progress.state.rowsRead + 1024;
          progress.tick();
          if (opts.signal?.aborted) throw opts.signal.reason;
        }
      };
      // the first rows holding something, held until they tell which is the header (a title or notes may come
      // above the table: files/sniff.ts); null once it is known
      let sample: SheetHeaderSample<Array<string | null>> | null = new SheetHeaderSample();
      /** rows holding only unreadable cells among those held: rows once the header is known, never the header */
      let unreadableOnly: number[] = [];
      let above = 0;
      const decide = () => {
        const { rows: held } = sample!;
        const h = (above = sample!.headerIndex());
        sample = null;
        if (held.length === 0) return;
        writer.header = held[h].item;
        writer.headerRow = held[h].number;
        if (held[h].item.length > writer.width) writer.widen(held[h].item.length);
        const rest = [
          ...held.slice(h + 1).map((r) => ({ number: r.number, cells: r.item })),
          ...unreadableOnly.filter((n) => n > held[h].number).map((n) => ({ number: n, cells: [] })),
        ].sort((a, b) => a.number - b.number);
        unreadableOnly = [];
        for (const r of rest) take(r.number, r.cells);
      };
      await readSheetRows(workbook.zip, part, (number, row) => {
        const unreadableBefore = writer.unreadable;
        const cells: Array<string | null> = [];
        let texts = 0;
        for (const cell of row) {
          let text = sheetCellText(cell, workbook);
          if (sample && text !== null && text !== UNREADABLE && TEXT_CELL_TYPES.has(cell.type)) texts++;
          if (text === UNREADABLE) {
            writer.unreadable++;
            text = null;
          }
          if (text === null) {
            if (cell.col < cells.length) cells[cell.col] = null;
            continue;
          }
          // a cell beyond the columns accepted fails the load here, before a row that wide is made
          if (cell.col >= writer.width && cell.col >= opts.maxColumns) writer.widen(cell.col + 1);
          while (cells.length < cell.col) cells.push(null);
          cells[cell.col] = text;
        }
        while (cells.length > 0 && cells[cells.length - 1] === null) cells.pop();
        if (sample) {
          // before the header, a row holding nothing is skipped (it only marks the next row as after a blank)
          if (cells.length === 0) {
            sample.blank();
            // a cell that cannot be read is something: a row of the table, if the header is above it
            if (writer.unreadable !== unreadableBefore) unreadableOnly.push(number);
            return;
          }
          // names: every cell up to the last is text
          sample.add(number, cells.length, texts === cells.length, cells);
          if (sample.full) decide();
          return;
        }
        // a row element that holds nothing (a height, a style, empty cells) is a blank row only when a row
        // that holds something follows it (`writer.row` adds it then, by its number): at the end of a
        // sheet it is no row, as blank lines at the end of a CSV. A cell that cannot be read is something
        if (cells.length === 0 && writer.unreadable === unreadableBefore) return;
        take(number, cells);
      });
      if (sample) decide();
      await writer.finish();
      const names = headerNames(writer.header ?? [], writer.width);
      const warnings = headerWarnings(writer.header ?? [], writer.width);
      if (above > 0) warnings.unshift(linesBeforeHeader(above, 'row(s) above the header (a title or notes)'));
      if (writer.unreadable > 0) {
        warnings.push({
          code: 'unreadable_cells',
          count: writer.unreadable,
          message: `${writer.unreadable} cell(s) hold an error value or a formula without a saved result and count as null`,
        });
      }
      sheets.push({
        name,
        index,
        table: writer.table,
        rowCount: writer.rows,
        rowNumberColumn: ROW_NUMBER_COLUMN,
        columns: columnsOf(names),
        warnings,
      });
    }
  } catch (err) {
    if (err instanceof AnalysisFailure || opts.signal?.aborted) throw err;
    // the workbook's fault (a broken zip, a part that does not unpack or is not well-formed XML): final, with
    // the reader's message, which names the part and the position, never a cell. Anything else (DuckDB's
    // appender, the disk) is no fault of the file: it goes on as it is, and the activity retries
    if (err instanceof UnreadableFileError) throw new AnalysisFailure('unparsable_file', err.message);
    throw err;
  } finally {
    book?.close();
  }
}

/**
 * Loads one stored version into `conn`: one table per sheet, every data column VARCHAR holding the raw
 * text, plus the row number column (see ./types.ts for the contract). Throws AnalysisFailure for a file
 * that cannot be read or is over a limit; rethrows `signal.reason` when aborted.
 */
export async function loadVersion(
  conn: DuckDBConnection,
  source: LoadSource,
  opts: LoadOptions,
): Promise<LoadedVersion> {
  const progress = new Progress(source.sizeBytes, opts.onProgress);
  const sheets =
    source.format === 'xlsx'
      ? await loadXlsx(conn, source, opts, progress)
      : await loadText(conn, source, opts, progress);
  const above = source.format === 'xlsx' ? 0 : (source.linesBeforeHeader ?? 0);
  if (above > 0 && sheets[0]) {
    sheets[0].warnings.unshift(
      linesBeforeHeader(above, "line(s) before the header (Excel's separator line, a title or notes)"),
    );
  }
  return { format: source.format, bytes: source.sizeBytes, sheets };
}
