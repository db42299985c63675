import { FILE_FORMATS } from '../../../common/files/formats';
import type { File, FileVersion } from '../../../db/models';

const iso = (d: Date | string) => new Date(d).toISOString();

/** Output fields listed one by one, so the model never leaks (e.g. object keys). */
export function presentFile(file: File) {
  return {
    id: file.id,
    originalName: file.originalName,
    datasetId: file.datasetId,
    visibility: file.visibility,
    currentVersion: file.currentVersion,
    uploadedBy: file.uploadedByPersonId,
    createdAt: iso(file.createdAt),
    updatedAt: iso(file.updatedAt ?? file.createdAt),
  };
}

export function presentVersion(version: FileVersion) {
  return {
    id: version.id,
    fileId: version.fileId,
    datasetId: version.datasetId,
    version: version.version,
    originalName: version.originalName,
    format: version.format,
    contentType: version.contentType,
    sizeBytes: Number(version.sizeBytes),
    rowCount: version.rowCount,
    columnCount: version.columnCount,
    uploadedBy: version.uploadedByPersonId,
    createdAt: iso(version.createdAt),
  };
}

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
    contentType: { type: 'string' },
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
