import { randomUUID } from 'node:crypto';
import type { TransactionOrKnex } from 'objection';
import { AuditLogEntry } from '../../db/models';

export interface AuditEntry {
  companyId: string;
  /** the person who acted (for a key: its owner); null when the service acted by itself */
  personId: string | null;
  apiKeyId?: string | null;
  action: string; // e.g. api_key.created, webhook_endpoint.auto_disabled
  resourceType: string;
  resourceId?: string | null;
  correlationId?: string | null;
  details?: Record<string, unknown>;
}

/**
 * Who acted in a request, as an audit entry starts: the company, the person (for an API key its owner),
 * the key if one was used, and the request's correlation id. Spread into recordAudit's entry.
 */
export function auditActor(
  actor: { companyId: string; personId: string; apiKeyId?: string | null },
  correlationId: string | undefined,
): Pick<AuditEntry, 'companyId' | 'personId' | 'apiKeyId' | 'correlationId'> {
  return {
    companyId: actor.companyId,
    personId: actor.personId,
    apiKeyId: actor.apiKeyId ?? null,
    correlationId: correlationId ?? null,
  };
}

/** Writes an audit record; pass the transaction of the change so both commit or neither does. */
export async function recordAudit(trx: TransactionOrKnex, entry: AuditEntry): Promise<void> {
  await AuditLogEntry.scoped(entry.companyId, trx).insert({
    id: randomUUID(),
    actorPersonId: entry.personId,
    actorApiKeyId: entry.apiKeyId ?? null,
    action: entry.action,
    resourceType: entry.resourceType,
    resourceId: entry.resourceId ?? null,
    correlationId: entry.correlationId ?? null,
    details: JSON.stringify(entry.details ?? {}),
  });
}
