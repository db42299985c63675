import { TenantModel } from './base';

/** One audit record (audit_log); written by domain/audit/record.ts, never changed. */
export class AuditLogEntry extends TenantModel {
  static override tableName = 'audit_log';
  static override get hasUpdatedAt(): boolean {
    return false;
  }

  /** null when the service acted by itself */
  actorPersonId!: string | null;
  actorApiKeyId!: string | null;
  action!: string;
  resourceType!: string;
  resourceId!: string | null;
  correlationId!: string | null;
  details!: unknown;
}
