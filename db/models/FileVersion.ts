import type { FileFormat } from '../../common/files/formats';
import { TenantModel } from './base';

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
  /** CSV/TSV: the line-ending rule it was counted with (common/files/lineEndings.ts); null for XLSX */
  lineEndings!: string | null;
  /** bigint comes back from pg as a string */
  sizeBytes!: number | string;
  objectKey!: string;
  rowCount!: number | null;
  columnCount!: number | null;
  uploadedByPersonId!: string;
  uploadedByApiKeyId!: string | null;
}
