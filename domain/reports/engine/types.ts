/**
 * THE ANALYSIS ENGINE CONTRACT (issue 12; issues 13 and 14 build on it — keep it stable).
 *
 * One stored version is read ONCE and analysed in a pipeline on one DuckDB connection:
 *
 *     load → profile → (extension steps: rules, detectors, …) → save
 *
 * - `loadVersion(conn, source, opts)` (./load.ts) reads the file (streamed once from its source) into
 *   DuckDB: one table per sheet (CSV/TSV: one sheet; XLSX: one per worksheet, in workbook order). Every
 *   data column is VARCHAR holding the cell's raw text (nothing is converted at load, so rules and
 *   detectors see what the user typed); NULL is an empty cell, one without any text (an XLSX cell whose
 *   text is empty is NULL too, never ''). `rowNumberColumn` (BIGINT) is the row number the user sees in a
 *   spreadsheet program (the header is row 1; blank rows before a later row are kept as rows of NULLs so
 *   numbering never shifts; blank rows at the end are no rows). Column idents are synthetic (`"c1"`,
 *   `"c2"`, …): use `ident` in SQL and `name` (the header name, made unique by domain/files/headerNames.ts)
 *   when talking to people.
 * - `profileVersion(conn, loaded)` (./profile.ts) computes the profile; each column's `inferredType`
 *   decides how later steps read its values: `typedSql(ident, type)` (./sql.ts) is the SQL expression of
 *   the typed value (NULL when the cell is null or does not parse), `isNullSql(ident)` the null rule.
 * - `AnalysisStep`s run after the profile, in order, on the same connection and tables; each returns the
 *   JSON section it contributes under its `name` in the report (`sections[name]`). A step must not read
 *   the file again and must never put cell values in events or logs.
 * - `runAnalysis(conn, source, steps, context, opts)` (./pipeline.ts) runs the whole pipeline.
 *
 * Issue 14 loads two versions into one connection: pass a distinct `tablePrefix` to each `loadVersion`, and
 * `lazy` (a CSV/TSV the fast path can read becomes a view over its downloaded copy, read again by each
 * query instead of held in memory).
 */
import type { Readable } from 'node:stream';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { TextEncoding } from '../../files/encoding';
import type { FileFormat } from '../../files/formats';
import type { XlsxLimits } from '../../files/xlsx';
import type { DownloadFacts } from './csvText';
import type { CellNotation } from './sql';

/** The file to load (read once, as a stream) and what the upload recorded about it. */
export interface LoadSource {
  /** opens the bytes: the MinIO object (activities) or a local file (`fileSource`, tests and benches) */
  open: () => Promise<Readable>;
  format: FileFormat;
  /** CSV/TSV: the delimiter the upload found (null: `,` for CSV, tab for TSV). Quote is `"`, escaped `""`. */
  delimiter: string | null;
  /**
   * CSV/TSV: the text encoding the upload found (domain/files/encoding.ts; null or absent: UTF-8). The bytes
   * are converted to UTF-8 as they are read, so everything after the download sees UTF-8.
   */
  encoding?: TextEncoding | null;
  /**
   * CSV/TSV: lines before the header the upload found (Excel's separator line, a title or notes:
   * domain/files/sniff.ts; null or absent: none). They are skipped as the text is read; the sheet's warnings
   * count them (`lines_before_header`).
   */
  linesBeforeHeader?: number | null;
  /**
   * CSV/TSV: the row a spreadsheet program shows the header on (domain/files/sniff.ts; null or absent: 1): the
   * data rows are numbered from the next one, as it shows them
   */
  headerRow?: number | null;
  sizeBytes: number;
  /**
   * CSV/TSV: the object already being downloaded by the caller (load.ts `downloadText`); the load takes the
   * file instead of downloading the object itself (and owns it from then on)
   */
  downloaded?: Promise<DownloadedText>;
}

/** A CSV/TSV object downloaded to a local file, with what the download's checks found (load.ts). */
export interface DownloadedText {
  path: string;
  facts: DownloadFacts;
}

export interface LoadProgress {
  /** data rows read so far (all sheets) */
  rowsRead: number;
  /** bytes of the file read so far, of `bytesTotal` */
  bytesRead: number;
  bytesTotal: number;
}

export interface LoadOptions {
  /** a sheet wider than this fails the load with reason `too_many_columns` */
  maxColumns: number;
  /** a sheet longer than this fails the load with reason `too_many_rows` */
  maxRows: number;
  /**
   * the workbook guards of an upload (zip layout, parts, unpacked size and ratio, shared strings, declared
   * dimensions), checked again on the copy an XLSX load reads, before reading it: a limit lowered since the
   * upload, or an object stored another way, fails the load (`too_many_rows`, `too_many_columns`,
   * `unsafe_workbook`). Reports and comparisons pass the configured ones; null (engine tests, on purpose: a
   * caller must say so) reads the workbook unchecked, at most 100,000 parts
   */
  xlsxLimits: XlsxLimits | null;
  /** table names become `<prefix>sheet_<i>` (default `''`) */
  tablePrefix?: string;
  /** called at most every few hundred milliseconds while loading */
  onProgress?: (progress: LoadProgress) => void;
  /** aborts the load (the build was cancelled) */
  signal?: AbortSignal;
  /**
   * a folder for the engine's temporary files (removed before loadVersion returns, but for `lazy` views'
   * copies: those stay until the caller removes the folder, after its last query)
   */
  workDir: string;
  /**
   * comparisons (issue 14): a CSV/TSV that DuckDB's reader takes as it is (the fast path) is not copied
   * into a table: its sheet's `table` is a VIEW over `read_csv` of the downloaded copy (row numbers from
   * the reader's order), checked, counted — and with `classify`, its cells classified — in one pass.
   * Other files load into tables as usual.
   */
  lazy?: boolean;
  /**
   * with `lazy`: the checking pass also records each column's classes (`LoadedSheet.classes`); a promise
   * is awaited once the file is downloaded (a lookup that decides it can run meanwhile)
   */
  classify?: boolean | Promise<boolean>;
  /**
   * with `lazy`, when no classification is asked for (the types come from reports): no checking pass at
   * all — the sheet is `unchecked` and its user's first pass over it checks and counts it (comparisons)
   */
  skipCheck?: boolean;
}

export interface LoadedColumn {
  /** the header name shown to people (unique within the sheet) */
  name: string;
  /** 1-based position in the sheet */
  position: number;
  /** the quoted SQL identifier of the VARCHAR column holding the raw text, e.g. `"c3"` */
  ident: string;
}

/** A counted problem that did not stop the build (never holds a cell value). */
export interface LoadWarning {
  code:
    | 'unreadable_cells'
    | 'rows_wider_than_header'
    | 'blank_header_cells'
    | 'repeated_header_names'
    | 'lines_before_header';
  count: number;
  message: string;
}

export interface LoadedSheet {
  name: string;
  /** 0-based position of the sheet in the file */
  index: number;
  /** the DuckDB table (unquoted, a plain identifier) */
  table: string;
  /** data rows (blank rows in between included, the header excluded) */
  rowCount: number;
  /** BIGINT column: the row number the user sees */
  rowNumberColumn: string;
  columns: LoadedColumn[];
  warnings: LoadWarning[];
  /**
   * `lazy` + `classify` loads only: per column (by position − 1), the bit set of the CLASS_CODES
   * (./sql.ts) its cells fall in (bit n: some cell is of class n)
   */
  classes?: number[];
  /**
   * `skipCheck` loads only: a view over the download that nothing has read yet — `rowCount` is −1 until the
   * caller's first pass counts it (and clears this flag); that pass fails when DuckDB's strict reader
   * refuses the file, and the caller then loads the version again without `skipCheck` (the normalising
   * path takes such files)
   */
  unchecked?: boolean;
  /**
   * `lazy` views only: a view of the same rows without the row number column, in file order — numbering
   * rows as they are read holds a scan to one thread, so passes that need no row number (or that number
   * the rows of a table made from it by `rowid`: row number = rowid + `firstRow`, ./load.ts) read this one
   */
  rawTable?: string;
  /**
   * `lazy` views only: the number of the first data row (the row after the header, as a spreadsheet shows it:
   * `LAZY_FIRST_ROW` unless a title or notes come before the header); rows are numbered by position from it
   */
  firstRow?: number;
  /**
   * a lazy view: the downloaded copy it reads (in the load's `workDir`), which a load of the same version
   * may take again as `LoadSource.downloaded` once the view is dropped
   */
  download?: DownloadedText;
  /**
   * a lazy view whose copy holds no quote character (`DownloadFacts.quoteFree`): one record per line, its cells
   * the line split at `delimiter` — a comparison reads its rows back by line number from `path`
   * (domain/comparisons/engine/lines.ts) rather than through DuckDB's reader
   */
  lines?: { path: string; delimiter: string; notation: CellNotation | null };
}

export interface LoadedVersion {
  format: FileFormat;
  bytes: number;
  sheets: LoadedSheet[];
}

export type InferredType = 'integer' | 'decimal' | 'boolean' | 'date' | 'datetime' | 'text';
export const INFERRED_TYPES: readonly InferredType[] = [
  'integer',
  'decimal',
  'boolean',
  'date',
  'datetime',
  'text',
];

export interface ColumnProfile {
  name: string;
  position: number;
  inferredType: InferredType;
  /** rows in the sheet */
  count: number;
  nulls: number;
  nonNull: number;
  /** share of the non-null values in each class (each value counted in exactly one class; sums to 1) */
  shares: Record<InferredType, number>;
  /** exact, over the non-null values compared as text (`1` and `1.0` are two values) */
  distinct: number;
  /** typed: numbers for integer/decimal, ISO strings for date/datetime, booleans; text: by code point */
  min: number | string | boolean | null;
  max: number | string | boolean | null;
  /** numeric columns only */
  mean: number | null;
  /** sample standard deviation (n − 1), numeric columns only */
  stddev: number | null;
  /** exact quantiles with linear interpolation (as pandas' default), numeric columns only */
  quantiles: { p5: number; p25: number; p50: number; p75: number; p95: number } | null;
  zeros: number | null;
  negatives: number | null;
  /** characters of the non-null values, text columns only */
  length: { min: number; max: number; mean: number } | null;
  /** the 10 most frequent non-null values (their text), most frequent first, ties by value */
  topValues: Array<{ value: string; count: number }>;
}

export interface SheetProfile {
  name: string;
  index: number;
  rows: number;
  columns: number;
  /** rows equal in every column to an earlier row (entirely blank rows are not counted) */
  duplicateRows: number;
  /**
   * rows whose every cell is empty (no text at all: NULL). A row of null words (`NA,NA`) is a row of null
   * values — counted in each column's `nulls` and compared for `duplicateRows` like any row — not a blank row
   */
  blankRows: number;
  warnings: LoadWarning[];
  columnProfiles: ColumnProfile[];
}

export interface Profile {
  format: FileFormat;
  sheets: SheetProfile[];
}

/** What the build knows about itself, handed to every step (ids only, never values). */
export interface AnalysisContext {
  companyId: string;
  fileId: string;
  fileVersionId: string;
  version: number;
  /** anything a step needs that the build read at its start (e.g. the company's rules, issue 13) */
  extra: Record<string, unknown>;
}

export interface AnalysisStepInput {
  conn: DuckDBConnection;
  loaded: LoadedVersion;
  profile: Profile;
  context: AnalysisContext;
}

/** One extension step of the pipeline; its result is the report section `sections[name]`. */
export interface AnalysisStep<S = unknown> {
  name: string;
  run(input: AnalysisStepInput): Promise<S>;
}

export interface AnalysisResult {
  loaded: LoadedVersion;
  profile: Profile;
  sections: Record<string, unknown>;
}

/** A file that cannot be analysed (bad content, over a limit): the build fails at once, never retried. */
export class AnalysisFailure extends Error {
  constructor(
    /** a documented reason code (README "Reports"), never a cell value */
    public readonly reason: FailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'AnalysisFailure';
  }
}

export type FailureReason =
  | 'unparsable_file'
  | 'too_many_columns'
  | 'too_many_rows'
  | 'unsafe_workbook'
  | 'file_missing'
  | 'internal_error';
