/**
 * What the service accepts as a spreadsheet, judged by content (README "Files"): XLSX (an Office Open XML
 * workbook, a zip), CSV (comma or semicolon separated) and TSV (tab separated), as UTF-8, Windows-1252 or UTF-16
 * text (./encoding.ts).
 */
import { FILE_FORMATS, type FileFormat } from '../../db/models/FileVersion';
import type { TextEncoding } from './encoding';

export { FILE_FORMATS, type FileFormat };

/** The spec's upload limit: "25 MB, above gives 413" (25 MiB: 26,214,400 bytes). */
export const MAX_FILE_BYTES = 25 * 1024 * 1024;

export const CONTENT_TYPES: Readonly<Record<FileFormat, string>> = {
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  csv: 'text/csv; charset=utf-8',
  tsv: 'text/tab-separated-values; charset=utf-8',
};

/**
 * A version's content type: CSV/TSV with the charset its text is in (downloads are served with it, so a browser
 * or a spreadsheet program reads a Windows-1252 or UTF-16 file right); XLSX as CONTENT_TYPES says.
 */
export function contentTypeOf(format: FileFormat, encoding: TextEncoding | null): string {
  if (format === 'xlsx' || !encoding || encoding === 'utf-8') return CONTENT_TYPES[format];
  return CONTENT_TYPES[format].replace('charset=utf-8', `charset=${encoding}`);
}

export type Delimiter = ',' | ';' | '\t';

export interface SheetLimits {
  maxRows: number;
  maxColumns: number;
}
