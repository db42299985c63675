import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import type { FileFormat } from './formats';
import { headerNames } from './headerNames';
import type { TextEncoding } from './encoding';
import { tableText } from './tableText';
import { RECORD_DELIMITERS } from './lineEndings';
import { UnreadableFileError } from './unreadable';

export interface PreviewOptions {
  /** data rows after the header */
  rows: number;
  maxColumns: number;
  maxCellChars: number;
}

export type CellValue = string | number | boolean | null;

export interface Preview {
  /** header names, in order (at most maxColumns) */
  columns: string[];
  rows: CellValue[][];
  /** the sheet has more rows / more columns than shown */
  moreRows: boolean;
  moreColumns: boolean;
}

function clip(value: string, max: number): string {
  return value.length > max ? value.slice(0, max) : value;
}

/** ExcelJS cell values (numbers, dates, formulas, rich text, hyperlinks, errors) to JSON values (report builds read with exceljs). */
export function plainCell(value: unknown, maxChars: number): CellValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'string') return clip(value, maxChars);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if ('result' in v) return plainCell(v.result, maxChars);
    if (Array.isArray(v.richText))
      return clip((v.richText as Array<{ text: string }>).map((r) => r.text).join(''), maxChars);
    if ('text' in v) return plainCell(v.text, maxChars);
    if ('error' in v) return String(v.error);
    if ('formula' in v || 'sharedFormula' in v) return null;
  }
  return clip(JSON.stringify(value) ?? '', maxChars);
}

/** A table (header row first) as a preview: named columns, rows padded to the shown width. */
export function shapePreview(table: CellValue[][], options: PreviewOptions, moreRows: boolean): Preview {
  const [header = [], ...body] = table;
  const width = Math.max(header.length, ...body.map((r) => r.length));
  const shown = Math.min(width, options.maxColumns);
  const columns = headerNames(header, shown);
  const rows = body.map((r) => Array.from({ length: shown }, (_, i) => r[i] ?? null));
  return { columns, rows, moreRows, moreColumns: width > shown };
}

const MAX_RECORD_BYTES = 1024 * 1024;

/**
 * What csv-parse refused, as the error body says it (422): its own messages can quote a cell, so only the
 * kind of problem and a line number are kept.
 */
function unreadableCsv(err: unknown): unknown {
  const e = err as { code?: unknown; lines?: unknown } | null;
  if (!e || typeof e.code !== 'string' || !e.code.startsWith('CSV_')) return err;
  const line = typeof e.lines === 'number' ? ` (line ${e.lines})` : '';
  switch (e.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return new UnreadableFileError(
        'the file cannot be read: a quoted cell is never closed (the file ends inside it)',
      );
    case 'CSV_MAX_RECORD_SIZE':
      return new UnreadableFileError(
        `the file cannot be read: a record is larger than ${MAX_RECORD_BYTES / 1024 / 1024} MiB${line}`,
      );
    default:
      return new UnreadableFileError(`the file cannot be read: it is not valid CSV/TSV${line}`);
  }
}

async function previewText(source: Readable, delimiter: string, options: PreviewOptions): Promise<Preview> {
  const parser = parse({
    delimiter,
    // the one line-ending rule (domain/files/lineEndings.ts): \r\n, \n and bare \r, mixed or not
    record_delimiter: [...RECORD_DELIMITERS],
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    max_record_size: MAX_RECORD_BYTES,
  });
  source.pipe(parser);
  const table: CellValue[][] = [];
  let moreRows = false;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (table.length === options.rows + 1) {
        moreRows = true;
        break;
      }
      table.push(record.slice(0, options.maxColumns + 1).map((c) => clip(c, options.maxCellChars)));
    }
  } catch (err) {
    throw unreadableCsv(err);
  } finally {
    source.unpipe(parser);
    source.destroy();
    parser.destroy();
  }
  return shapePreview(table, options, moreRows);
}

/**
 * The first rows and the columns of a stored CSV/TSV version, read as a stream and stopped early.
 * XLSX: domain/files/xlsxPreview.ts (ranged reads of the stored object, shared strings read as needed).
 */
export async function previewStream(
  source: Readable,
  format: Exclude<FileFormat, 'xlsx'>,
  delimiter: string | null,
  options: PreviewOptions,
  /** the version's (null or absent: UTF-8); any other encoding is converted to UTF-8 as it is read */
  encoding?: TextEncoding | null,
  /** the version's lines before its header (null or absent: none), skipped */
  linesBeforeHeader?: number | null,
): Promise<Preview> {
  return previewText(
    tableText(source, encoding, linesBeforeHeader),
    delimiter ?? (format === 'tsv' ? '\t' : ','),
    options,
  );
}
