/**
 * Access rules of the webhooks capability: who may manage endpoints, and which rows an actor may see or
 * change. A row of another company is "not found", never "forbidden".
 */
import type { Knex } from 'knex';
import { ConflictError, ForbiddenError, NotFoundError } from '../../common/errors';
import { WebhookDelivery, WebhookEndpoint } from '../../db/models';

/** Who acts: the part of the API's principal (api/context.ts) the webhooks domain reads. */
export interface Actor {
  kind: 'session' | 'key';
  companyId: string;
  personId: string;
  role: 'admin' | 'employee';
  apiKeyId?: string | null;
}

/**
 * Who may manage webhooks: the company's admins, in a session; no API key scope opens them. The route table
 * uses this very rule (api/routes/outgoing-webhooks), so HTTP refuses others with 403 before the domain runs.
 */
export const MANAGE_WEBHOOKS = { roles: ['admin'] } as const;

export function assertMayManage(actor: Actor): void {
  if (actor.kind !== 'session' || !(MANAGE_WEBHOOKS.roles as readonly string[]).includes(actor.role)) {
    throw new ForbiddenError('only an admin in a session may manage webhooks');
  }
}

/** Where a query runs: the unit of work's transaction, or the connection pool for a read. */
export type Db = Knex | Knex.Transaction;

/** `forUpdate` locks the row for the unit of work's change. */
type Lock = { forUpdate?: boolean };

/** A row found, or 404: absent and of another company look the same. */
function found<T>(row: T | undefined, message: string): T {
  if (!row) throw new NotFoundError(message);
  return row;
}

/** The company's endpoints (a query, to be paged by the caller). */
export function endpointsOf(actor: Actor, db: Db) {
  return WebhookEndpoint.scoped(actor.companyId, db);
}

/** One endpoint of the actor's company (404 otherwise); `forUpdate` locks it for a change. */
export async function endpointFor(actor: Actor, id: string, db: Db, options: Lock = {}) {
  const query = endpointsOf(actor, db).findById(id);
  return found(await (options.forUpdate ? query.forUpdate() : query), 'webhook endpoint not found');
}

/**
 * The endpoint a ping or redelivery goes to: it must exist in the company and be active (409). Key-share
 * locked, as the delivery's foreign key will: a delete or an admin's change under way is waited for (then
 * 404, or 409 once disabled), where the delivery's insert used to fail on the foreign key (409).
 */
export async function activeEndpointFor(actor: Actor, id: string, db: Db): Promise<WebhookEndpoint> {
  const endpoint = found(
    await endpointsOf(actor, db).findById(id).forKeyShare(),
    'webhook endpoint not found',
  );
  if (!endpoint.active) {
    throw new ConflictError('the endpoint is disabled; enable it with PATCH active true first');
  }
  return endpoint;
}

/** The company's deliveries (a query, to be filtered and paged by the caller). */
export function deliveriesOf(actor: Actor, db: Db) {
  return WebhookDelivery.scoped(actor.companyId, db);
}

/** One delivery of the actor's company (404 otherwise). */
export async function deliveryFor(actor: Actor, id: string, db: Db): Promise<WebhookDelivery> {
  return found(await deliveriesOf(actor, db).findById(id), 'delivery not found');
}
