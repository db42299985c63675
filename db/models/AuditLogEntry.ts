import { TenantModel } from './base';

export type AuditActorType = 'person' | 'apiKey' | 'system';
export type AuditOutcome = 'success' | 'failure' | 'denied';

/**
 * One audit record (audit_log); written by domain/audit/record.ts, never changed: the application role may
 * not update or delete the table, and a trigger refuses updates (20261123001020_audit_log).
 */
export class AuditLogEntry extends TenantModel {
  static override tableName = 'audit_log';
  static override get hasUpdatedAt(): boolean {
    return false;
  }

  /** null when the service acted by itself */
  actorPersonId!: string | null;
  actorApiKeyId!: string | null;
  actorType!: AuditActorType;
  /** svc_live_<identifier> of the key that acted */
  actorKeyPrefix!: string | null;
  action!: string;
  resourceType!: string;
  resourceId!: string | null;
  outcome!: AuditOutcome;
  correlationId!: string | null;
  clientAddress!: string | null;
  details!: unknown;
}
