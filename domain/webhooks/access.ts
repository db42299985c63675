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

/** The company's endpoints (a query, to be paged by the caller). */
export function endpointsOf(actor: Actor, db: Db) {
  return WebhookEndpoint.scoped(actor.companyId, db);
}

/** One endpoint of the actor's company (404 otherwise); `forUpdate` locks it for a change. */
export async function endpointFor(
  actor: Actor,
  id: string,
  db: Db,
  options: { forUpdate?: boolean } = {},
): Promise<WebhookEndpoint> {
  const query = endpointsOf(actor, db).findById(id);
  const endpoint = await (options.forUpdate ? query.forUpdate() : query);
  if (!endpoint) throw new NotFoundError('webhook endpoint not found');
  return endpoint;
}

/** The endpoint a ping or redelivery goes to: it must exist in the company and be active (409). */
export async function activeEndpointFor(actor: Actor, id: string, db: Db): Promise<WebhookEndpoint> {
  const endpoint = await endpointFor(actor, id, db);
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
  const delivery = await deliveriesOf(actor, db).findById(id);
  if (!delivery) throw new NotFoundError('delivery not found');
  return delivery;
}
