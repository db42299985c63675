import { KeyedTenantModel } from './base';

/** Uploads counted per company and billing period (file_usage; domain/plans/quota.ts). */
export class FileUsage extends KeyedTenantModel {
  static override tableName = 'file_usage';
  static override idColumn = ['companyId', 'periodKey'];

  periodKey!: string;
  filesUsed!: number;
}

/** The proof that a quota threshold was announced once in a period (quota_notices). */
export class QuotaNotice extends KeyedTenantModel {
  static override tableName = 'quota_notices';
  static override idColumn = ['companyId', 'periodKey', 'threshold'];

  periodKey!: string;
  threshold!: number;
  plan!: string;
  filesUsed!: number;
  filesLimit!: number;
}
