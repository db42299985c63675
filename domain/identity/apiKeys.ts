/**
 * API keys: create (the full key is shown once), list and revoke. An admin sees and revokes the company's
 * keys, an employee their own; a key never holds a scope its owner's role may not give.
 */
import { randomUUID } from 'node:crypto';
import type { QueryBuilderType } from 'objection';
import type { ApiKey } from '../../db/models';
import { ForbiddenError, NotFoundError } from '../../common/errors';
import type { UnitOfWork } from '../../db/transaction';
import { recordAudit } from '../audit/record';
import { apiKeysVisibleTo, type Actor, type ApiKeyRow, type Db } from './access';
import type { IdentityDeps } from './deps';
import { generateKey } from './keyFormat';
import { keysOf } from './keys';
import { mayHoldScope, type Scope } from './scopes';

/** 403 when the actor's role may not give one of the scopes (the spec's scope table). */
export function assertMayGrant(actor: Actor, scopes: readonly Scope[]): void {
  const refused = scopes.filter((s) => !mayHoldScope(actor.role, s));
  if (refused.length > 0) throw new ForbiddenError(`only admins may give the scopes ${refused.join(', ')}`);
}

/** A new key of the actor; `key` is the full key, never stored and never shown again. */
export async function createApiKey(
  deps: Pick<IdentityDeps, 'config'>,
  actor: Actor,
  uow: UnitOfWork,
  input: { name: string; scopes: Scope[] },
): Promise<{ row: ApiKeyRow; key: string }> {
  assertMayGrant(actor, input.scopes);
  const created = generateKey(keysOf(deps.config).apiKey);
  const [row] = (await uow
    .trx('apiKeys')
    .insert({
      id: randomUUID(),
      companyId: actor.companyId,
      personId: actor.personId,
      name: input.name,
      scopes: input.scopes,
      identifier: created.identifier,
      secretFingerprint: created.secretFingerprint,
    })
    .returning('*')) as ApiKeyRow[];
  await recordAudit(uow.trx, {
    companyId: actor.companyId,
    personId: actor.personId,
    action: 'api_key.created',
    resourceType: 'api_key',
    resourceId: row.id,
    correlationId: uow.correlationId,
    details: { name: input.name, scopes: input.scopes },
  });
  return { row, key: created.key };
}

/** The live keys the actor may see (a query, to be paged by the caller). */
export function apiKeysList(actor: Actor, db: Db): QueryBuilderType<ApiKey> {
  return apiKeysVisibleTo(actor, db).whereNull('revokedAt');
}

/** Revokes a key the actor may see (404 otherwise); revoking twice changes nothing. */
export async function revokeApiKey(actor: Actor, uow: UnitOfWork, id: string): Promise<void> {
  const { trx } = uow;
  const key = (await apiKeysVisibleTo(actor, trx).where({ id }).forUpdate().first()) as ApiKeyRow | undefined;
  if (!key) throw new NotFoundError('API key not found');
  if (key.revokedAt) return;
  await trx('apiKeys').where({ id: key.id }).update({ revokedAt: trx.fn.now() });
  await recordAudit(trx, {
    companyId: actor.companyId,
    personId: actor.personId,
    action: 'api_key.revoked',
    resourceType: 'api_key',
    resourceId: key.id,
    correlationId: uow.correlationId,
  });
}
