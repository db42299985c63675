import { TenantModel } from './base';

/** The flagged columns of one version (names and kinds, never values) and when the event was sent. */
export class SensitiveFinding extends TenantModel {
  static override tableName = 'sensitive_findings';
  static override jsonAttributes: string[] = ['columns'];

  fileVersionId!: string;
  fileId!: string;
  version!: number;
  columns!: Array<{ name: string; kinds: string[] }>;
  notifiedAt!: Date | null;
}
