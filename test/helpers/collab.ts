/** Helpers of the comments, notifications and audit-log tests (issue 15). */
import { randomUUID } from 'node:crypto';
import { deriveKey } from '../../common/secrets';
import { generateKey } from '../../domain/identity/keyFormat';
import type { Scope } from '../../api/routing';
import type { TestPerson } from './factories';
import { testEnv } from './env';
import type { HttpResponse } from './http';

/** An API key of the person with its id (the audit log names keys by id and prefix). */
export async function keyWithId(
  person: TestPerson,
  scopes: Scope[],
): Promise<{ token: string; id: string; prefix: string }> {
  const { knex, config } = testEnv();
  const created = generateKey(deriveKey(config.secretKey, 'api-key'));
  const id = randomUUID();
  await knex('apiKeys').insert({
    id,
    companyId: person.companyId,
    personId: person.id,
    name: 'audit test key',
    scopes,
    identifier: created.identifier,
    secretFingerprint: created.secretFingerprint,
  });
  return { token: created.key, id, prefix: `svc_live_${created.identifier}` };
}

export interface AuditRow {
  id: string;
  companyId: string;
  actorPersonId: string | null;
  actorApiKeyId: string | null;
  actorType: string;
  actorKeyPrefix: string | null;
  action: string;
  resourceType: string;
  resourceId: string | null;
  outcome: string;
  correlationId: string | null;
  clientAddress: string | null;
  details: Record<string, unknown>;
}

/** The audit entries written while serving the response (by its correlation id), read by the owner. */
export async function auditOf(res: HttpResponse): Promise<AuditRow[]> {
  const correlationId = res.headers.get('x-request-id');
  if (!correlationId) return [];
  return (await testEnv().knex('auditLog').where({ correlationId }).orderBy('createdAt')) as AuditRow[];
}

export interface NotificationRow {
  id: string;
  companyId: string;
  personId: string;
  kind: string;
  resourceType: string;
  resourceId: string | null;
  data: Record<string, unknown>;
  dedupeKey: string;
  readAt: Date | null;
}

/** The notifications of a person (owner's connection), oldest first. */
export async function notificationsOfPerson(personId: string, kind?: string): Promise<NotificationRow[]> {
  const q = testEnv().knex('notifications').where({ personId }).orderBy('createdAt');
  if (kind) void q.where({ kind });
  return (await q) as NotificationRow[];
}
