/**
 * What the service accepts as a spreadsheet, judged by content (README "Files"): XLSX (an Office Open XML
 * workbook, a zip), CSV (comma or semicolon separated) and TSV (tab separated), as UTF-8 text.
 */
import { FILE_FORMATS, type FileFormat } from '../../db/models/FileVersion';

export { FILE_FORMATS, type FileFormat };

/** The spec's upload limit: "25 MB, above gives 413" (25 MiB: 26,214,400 bytes). */
export const MAX_FILE_BYTES = 25 * 1024 * 1024;

export const CONTENT_TYPES: Readonly<Record<FileFormat, string>> = {
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  csv: 'text/csv; charset=utf-8',
  tsv: 'text/tab-separated-values; charset=utf-8',
};

export type Delimiter = ',' | ';' | '\t';

export interface SheetLimits {
  maxRows: number;
  maxColumns: number;
}
