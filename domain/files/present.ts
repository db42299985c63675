/** Presenters of the files capability: what every adapter shows of a file and of a version. */
import type { File, FileVersion } from '../../db/models';

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
    // CSV/TSV: the encoding its text is read in (versions stored before it was recorded were all UTF-8)
    encoding: version.format === 'xlsx' ? null : (version.encoding ?? 'utf-8'),
    // CSV/TSV: the line its header is on (1 unless Excel's separator line, a title or notes come before it)
    headerLine: version.format === 'xlsx' ? null : (version.linesBeforeHeader ?? 0) + 1,
    sizeBytes: Number(version.sizeBytes),
    rowCount: version.rowCount,
    columnCount: version.columnCount,
    uploadedBy: version.uploadedByPersonId,
    createdAt: iso(version.createdAt),
  };
}
