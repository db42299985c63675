import { TenantModel } from './base';

/** The table that the versions of one file hold (events name it as datasetId). */
export class Dataset extends TenantModel {
  static override tableName = 'datasets';

  fileId!: string;
}
