/**
 * Deliveries made by hand — a ping, a redelivery — and the list of an endpoint's deliveries. A delivery made
 * by hand is recorded with its audit entry in the caller's unit of work, and its own workflow (all 5
 * attempts there) starts after commit; should the start fail, the outbox dispatcher's sweep starts it.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { PartialModelObject } from 'objection';
import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import { auditActor, recordAudit, type AuditEntry } from '../audit/record';
import type { WebhookDelivery } from '../../db/models';
import type { UnitOfWork } from '../../db/transaction';
import {
  activeEndpointFor,
  assertMayManage,
  deliveriesOf,
  deliveryFor,
  endpointFor,
  type Actor,
  type Db,
} from './access';
import { startDeliveryWorkflows } from './starts';

export interface DeliveryDeps {
  config: Config;
  knex: Knex;
  temporal: Client;
  /** where a failed start after commit is logged (the request's logger) */
  logger: Logger;
}

async function queueDelivery(
  deps: DeliveryDeps,
  actor: Actor,
  uow: UnitOfWork,
  fields: Omit<PartialModelObject<WebhookDelivery>, 'id' | 'companyId'>,
  audit: (
    delivery: WebhookDelivery,
  ) => Pick<AuditEntry, 'action' | 'resourceType' | 'resourceId' | 'details'>,
): Promise<WebhookDelivery> {
  const created = await deliveriesOf(actor, uow.trx).insertAndFetch({ id: randomUUID(), ...fields });
  await recordAudit(uow.trx, { ...auditActor(actor, uow.correlationId), ...audit(created) });
  uow.afterCommit(async () => {
    const { errors } = await startDeliveryWorkflows(deps.temporal, deps.knex, deps.config, [
      { id: created.id, companyId: created.companyId, correlationId: uow.correlationId },
    ]);
    // saved all the same: the outbox dispatcher starts deliveries left unstarted
    if (errors.length > 0) deps.logger.error({ err: errors[0] }, 'delivery workflow start failed');
  });
  return created;
}

/** Sends a `ping` event to this endpoint only, whatever its events list (409 when it is disabled). */
export async function pingEndpoint(
  deps: DeliveryDeps,
  actor: Actor,
  uow: UnitOfWork,
  endpointId: string,
): Promise<WebhookDelivery> {
  assertMayManage(actor);
  const endpoint = await activeEndpointFor(actor, endpointId, uow.trx);
  // through the outbox like every event; the delivery is recorded now so the answer can name it
  // (the dispatcher's fan-out finds it there and adds nothing)
  const data = { endpointId: endpoint.id };
  const eventId = await uow.emit({ companyId: actor.companyId, type: 'ping', data });
  const fields = {
    endpointId: endpoint.id,
    eventId,
    eventType: 'ping',
    eventData: data,
    // now() is the transaction's start time: the outbox row's created_at, the envelope's createdAt
    eventCreatedAt: uow.trx.fn.now(),
  };
  return queueDelivery(deps, actor, uow, fields, (created) => ({
    action: 'webhook_endpoint.pinged',
    resourceType: 'webhook_endpoint',
    resourceId: endpoint.id,
    details: { eventId, deliveryId: created.id },
  }));
}

/**
 * Sends the event of a delivery again, as a new delivery with the same webhook-id (409 when its endpoint is
 * disabled).
 */
export async function redeliver(
  deps: DeliveryDeps,
  actor: Actor,
  uow: UnitOfWork,
  deliveryId: string,
): Promise<WebhookDelivery> {
  assertMayManage(actor);
  const original = await deliveryFor(actor, deliveryId, uow.trx);
  const endpoint = await activeEndpointFor(actor, original.endpointId, uow.trx);
  const fields = {
    endpointId: endpoint.id,
    eventId: original.eventId,
    eventType: original.eventType,
    eventData: original.eventData,
    eventCreatedAt: original.eventCreatedAt,
    redeliveryOf: original.id,
  };
  return queueDelivery(deps, actor, uow, fields, (created) => ({
    action: 'webhook_delivery.redelivered',
    resourceType: 'webhook_delivery',
    resourceId: created.id,
    details: { redeliveryOf: original.id, eventId: original.eventId, endpointId: endpoint.id },
  }));
}

/**
 * An endpoint's deliveries (404 for an endpoint not of the company), as a query the caller pages (wrapped:
 * a query builder is thenable, so an async function cannot return one unawaited).
 */
export async function listDeliveries(actor: Actor, db: Db, endpointId: string) {
  assertMayManage(actor);
  const endpoint = await endpointFor(actor, endpointId, db);
  return { query: deliveriesOf(actor, db).where({ endpointId: endpoint.id }) };
}
