import { randomUUID } from 'node:crypto';
import { raw, type TransactionOrKnex } from 'objection';
import { currentRequest } from '../../common/requestContext';
import { AuditLogEntry, type AuditActorType, type AuditOutcome } from '../../db/models';
import { KEY_PREFIX } from '../identity/keyFormat';

export interface AuditEntry {
  companyId: string;
  /** the person who acted (for a key: its owner); null when the service acted by itself */
  personId: string | null;
  apiKeyId?: string | null;
  action: string; // dotted: api_key.created, webhook_endpoint.disabled (docs/audit.md lists them)
  resourceType: string;
  resourceId?: string | null;
  /** success unless told: a refused sign-in is `failure`, a reused refresh token `denied` */
  outcome?: AuditOutcome;
  /** the request's, when written while serving one (common/requestContext.ts) */
  correlationId?: string | null;
  /** the request's client address, when written while serving one */
  clientAddress?: string | null;
  /** which fields changed and how, in names and small values — never secrets nor cell values */
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

/** Field names whose values never enter the audit log (their names may: "password changed"). */
const SECRET_FIELD = /pass(word)?|secret|token|hash|fingerprint|cookie|authorization|api_?key$/i;

/**
 * The details as stored: values of secret-looking fields replaced by `"[redacted]"`, nested objects and
 * arrays walked (at most 4 levels deep, then cut), long strings cut at 200 characters.
 */
export function safeDetails(details: unknown, depth = 0): unknown {
  if (details === null || typeof details !== 'object') {
    return typeof details === 'string' && details.length > 200 ? `${details.slice(0, 200)}…` : details;
  }
  if (depth >= 4) return '[cut]';
  if (Array.isArray(details)) return details.slice(0, 50).map((v) => safeDetails(v, depth + 1));
  return Object.fromEntries(
    Object.entries(details as Record<string, unknown>).map(([k, v]) => [
      k,
      SECRET_FIELD.test(k) && v !== undefined && typeof v !== 'boolean'
        ? '[redacted]'
        : safeDetails(v, depth + 1),
    ]),
  );
}

export function actorTypeOf(entry: Pick<AuditEntry, 'personId' | 'apiKeyId'>): AuditActorType {
  if (entry.apiKeyId) return 'apiKey';
  return entry.personId ? 'person' : 'system';
}

/**
 * Benchmarks only (bench/audit.ts measures what the entry costs a write route, on against off in one run):
 * never turned off in service.
 */
export const auditWrites = { enabled: true };

/**
 * Writes an audit record; pass the transaction of the change so both commit or neither does. The key's
 * prefix (svc_live_<identifier>) is copied in the same statement, so the entry names the key for good. The
 * correlation id and client address default to the request being served (common/requestContext.ts).
 */
export async function recordAudit(trx: TransactionOrKnex, entry: AuditEntry): Promise<void> {
  if (!auditWrites.enabled) return;
  const request = currentRequest();
  await AuditLogEntry.scoped(entry.companyId, trx).insert({
    id: randomUUID(),
    actorPersonId: entry.personId,
    actorApiKeyId: entry.apiKeyId ?? null,
    actorType: actorTypeOf(entry),
    actorKeyPrefix: entry.apiKeyId
      ? (raw(`(select ? || identifier from api_keys where id = ?)`, [
          KEY_PREFIX,
          entry.apiKeyId,
        ]) as unknown as string)
      : null,
    action: entry.action,
    resourceType: entry.resourceType,
    resourceId: entry.resourceId ?? null,
    outcome: entry.outcome ?? 'success',
    correlationId: entry.correlationId ?? request?.correlationId ?? null,
    clientAddress: entry.clientAddress ?? request?.clientAddress ?? null,
    details: JSON.stringify(safeDetails(entry.details ?? {})),
  });
}
