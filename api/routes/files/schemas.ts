import { FILE_FORMATS } from '../../../domain/files/formats';
import { TEXT_ENCODINGS } from '../../../domain/files/encoding';

/** Response schemas of the files routes: the shapes domain/files/present.ts produces. */
const uuid = { type: 'string', format: 'uuid' } as const;
const timestamp = { type: 'string', format: 'date-time' } as const;

export const fileSchema = {
  type: 'object',
  required: ['id', 'originalName', 'datasetId', 'visibility', 'currentVersion', 'uploadedBy', 'createdAt'],
  properties: {
    id: uuid,
    originalName: { type: 'string' },
    datasetId: uuid,
    visibility: { enum: ['private', 'company'] },
    currentVersion: { type: 'integer', minimum: 1 },
    uploadedBy: { ...uuid, description: 'id of the person who uploaded version 1' },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const;

export const versionSchema = {
  type: 'object',
  required: ['id', 'fileId', 'datasetId', 'version', 'originalName', 'format', 'sizeBytes', 'createdAt'],
  properties: {
    id: uuid,
    fileId: uuid,
    datasetId: uuid,
    version: { type: 'integer', minimum: 1 },
    originalName: { type: 'string' },
    format: { enum: FILE_FORMATS },
    contentType: {
      type: 'string',
      description:
        'XLSX, or text/csv / text/tab-separated-values with the charset of `encoding`; downloads are served with it',
    },
    encoding: {
      enum: [...TEXT_ENCODINGS, null],
      description:
        'CSV/TSV: the text encoding the upload found — UTF-16 after its byte order mark, else UTF-8, or ' +
        'Windows-1252 (Windows-1250 or Mac Roman when their letters say so) when the text is not UTF-8 (a mix is ' +
        'refused); ' +
        'readers convert it, the stored object ' +
        'keeps the uploaded bytes. null for XLSX',
    },
    headerLine: {
      type: ['integer', 'null'],
      minimum: 1,
      description:
        "CSV/TSV: the file's line the header is on — 1, unless lines come before the table: Excel's separator " +
        'line (`sep=;`, which names the delimiter), or a title or notes above it (one-field lines, or lines ' +
        'narrower than the header with an empty line before it). Those lines are no rows; row numbers count ' +
        'from the header (row 1). null for XLSX',
    },
    sizeBytes: { type: 'integer' },
    rowCount: {
      type: ['integer', 'null'],
      description: 'data rows after the header: counted lines (CSV/TSV), or declared by the sheet (XLSX)',
    },
    columnCount: { type: ['integer', 'null'] },
    uploadedBy: uuid,
    createdAt: timestamp,
  },
} as const;
