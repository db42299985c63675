import { TenantModel } from './base';

/** A report on one file version; this issue records only that one is wanted (status 'requested'). */
export class Report extends TenantModel {
  static override tableName = 'reports';

  fileId!: string;
  fileVersionId!: string;
  version!: number;
  status!: string;
  workflowId!: string | null;
}
