import { TenantModel } from './base';

export type Visibility = 'private' | 'company';

/** An uploaded file: what GET /files lists. Its bytes live in its versions. */
export class File extends TenantModel {
  static override tableName = 'files';

  datasetId!: string;
  originalName!: string;
  uploadedByPersonId!: string;
  uploadedByApiKeyId!: string | null;
  visibility!: Visibility;
  currentVersion!: number;
}
