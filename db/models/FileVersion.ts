import { TenantModel } from './base';

/** The stored formats: the values the file_versions_format_check constraint allows (domain/files/formats.ts). */
export type FileFormat = 'xlsx' | 'csv' | 'tsv';
export const FILE_FORMATS: readonly FileFormat[] = ['xlsx', 'csv', 'tsv'];

/** A CSV/TSV version's text encodings: the values file_versions_encoding_check allows (domain/files/encoding.ts). */
export const TEXT_ENCODINGS = [
  'utf-8',
  'windows-1252',
  'windows-1250',
  'macintosh',
  'utf-16le',
  'utf-16be',
] as const;
export type TextEncoding = (typeof TEXT_ENCODINGS)[number];

/** Version n of a file: one object in MinIO holding one upload's bytes. */
export class FileVersion extends TenantModel {
  static override tableName = 'fileVersions';

  fileId!: string;
  datasetId!: string;
  version!: number;
  originalName!: string;
  format!: FileFormat;
  contentType!: string;
  delimiter!: string | null;
  /** CSV/TSV: the line-ending rule it was counted with (domain/files/lineEndings.ts); null for XLSX */
  lineEndings!: string | null;
  /** CSV/TSV: its text encoding (domain/files/encoding.ts); null for XLSX and for versions stored before it */
  encoding!: TextEncoding | null;
  /**
   * CSV/TSV: lines before the header that no reader takes as part of the table (Excel's separator line, a title
   * or notes; domain/files/sniff.ts); null for XLSX and for versions stored before it (0)
   */
  linesBeforeHeader!: number | null;
  /**
   * CSV/TSV: the row a spreadsheet program shows the header on — its lines before the header but Excel's
   * separator line, which Excel hides, plus 1; row numbers count from it. Null for XLSX and for versions stored
   * before it (1)
   */
  headerRow!: number | null;
  /** bigint comes back from pg as a string */
  sizeBytes!: number | string;
  objectKey!: string;
  rowCount!: number | null;
  columnCount!: number | null;
  uploadedByPersonId!: string;
  uploadedByApiKeyId!: string | null;
}
