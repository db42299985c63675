import type { AuditLogEntry } from '../../db/models';

/** The fields an audit entry shows, one by one (`details` is shown as `changes`). */
export function presentAuditEntry(e: AuditLogEntry) {
  return {
    id: e.id,
    time: new Date(e.createdAt).toISOString(),
    action: e.action,
    actor: {
      type: e.actorType,
      personId: e.actorPersonId,
      apiKeyId: e.actorApiKeyId,
      keyPrefix: e.actorKeyPrefix,
    },
    resource: { type: e.resourceType, id: e.resourceId },
    outcome: e.outcome,
    correlationId: e.correlationId,
    clientAddress: e.clientAddress,
    changes: (e.details ?? {}) as Record<string, unknown>,
  };
}
