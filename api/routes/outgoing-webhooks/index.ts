/**
 * Outgoing webhooks (spec "Outgoing webhooks"): admin session only; API keys and employees get 403 from the
 * route table's access rule. Response bodies are this service's choice (docs/webhooks.md).
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Model, PartialModelObject } from 'objection';
import { planLimits, type PlanName } from '../../../domain/plans/plans';
import { BadRequestError, ConflictError, NotFoundError, PaymentRequiredError } from '../../../common/errors';
import { startDeliveryWorkflows } from '../../../common/webhookDeliveryStart';
import { generateWebhookSecret, webhookSecretBox } from '../../../common/webhookSecret';
import { checkTargetUrl } from '../../../common/webhookTargets';
import { auditActor, recordAudit, type AuditEntry } from '../../../db/audit';
import { WebhookDelivery, WebhookEndpoint } from '../../../db/models';
import { EVENT_TYPES, transact } from '../../../db/transaction';
import type { AppContext, Principal } from '../../context';
import { pageList, type PageQuery } from '../../lists';
import { principalOf } from '../../middlewares/authenticate';
import { NO_PLAN_MESSAGE } from '../../middlewares/plan';
import { route } from '../../routing';
import { pageEnvelopeSchema, pageQuerySchema, uuidParams } from '../../schemas';

const TAG = 'Outgoing webhooks';
const ADMIN_SESSION = { roles: ['admin'] } as const;

// ---------------------------------------------------------------- schemas

const nameSchema = { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' } as const;
const urlSchema = { type: 'string', minLength: 1, maxLength: 2048 } as const;
const eventsSchema = {
  type: 'array',
  minItems: 1,
  uniqueItems: true,
  items: { enum: [...EVENT_TYPES] },
} as const;

const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'url', 'events'],
  properties: { name: nameSchema, url: urlSchema, events: eventsSchema },
} as const;

const patchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { name: nameSchema, url: urlSchema, events: eventsSchema, active: { type: 'boolean' } },
} as const;

const deliveryParams = {
  type: 'object',
  additionalProperties: false,
  required: ['deliveryId'],
  properties: { deliveryId: { type: 'string', format: 'uuid' } },
} as const;

const timestamp = { type: ['string', 'null'], format: 'date-time' } as const;

const endpointSchema = {
  type: 'object',
  required: ['id', 'name', 'url', 'events', 'active', 'consecutiveFailures', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    url: { type: 'string' },
    events: { type: 'array', items: { enum: [...EVENT_TYPES] } },
    active: { type: 'boolean' },
    disabledReason: {
      enum: ['disabled_by_admin', 'receiver_gone', 'consecutive_failures', null],
      description: 'why the endpoint is disabled; null while active',
    },
    disabledAt: timestamp,
    consecutiveFailures: { type: 'integer', description: 'failed deliveries in a row (20 disable it)' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

const endpointWithSecretSchema = {
  ...endpointSchema,
  required: [...endpointSchema.required, 'secret'],
  properties: {
    ...endpointSchema.properties,
    secret: { type: 'string', pattern: '^whsec_', description: 'the signing secret, shown only now' },
  },
};

const deliverySchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    endpointId: { type: 'string', format: 'uuid' },
    eventId: { type: 'string', format: 'uuid', description: 'sent as webhook-id' },
    eventType: { type: 'string' },
    status: { enum: ['pending', 'retrying', 'succeeded', 'failed', 'cancelled'] },
    attempts: { type: 'integer', minimum: 0, maximum: 5 },
    responseStatus: {
      type: ['integer', 'null'],
      description: "the receiver's status code at the latest attempt",
    },
    lastError: { type: ['string', 'null'] },
    redeliveryOf: { type: ['string', 'null'], description: 'the delivery this one sends again' },
    createdAt: { type: 'string', format: 'date-time' },
    lastAttemptAt: timestamp,
    completedAt: timestamp,
  },
};

// ---------------------------------------------------------------- presenters

function iso(value: Date | string | null | undefined): string | null {
  return value ? new Date(value).toISOString() : null;
}

type EndpointFields = Omit<WebhookEndpoint, keyof Model | 'secretEncrypted'>;
type DeliveryFields = Omit<WebhookDelivery, keyof Model>;

export function presentEndpoint(e: EndpointFields) {
  return {
    id: e.id,
    name: e.name,
    url: e.url,
    events: e.events,
    active: e.active,
    disabledReason: e.disabledReason,
    disabledAt: iso(e.disabledAt),
    consecutiveFailures: e.consecutiveFailures,
    createdAt: iso(e.createdAt),
    updatedAt: iso(e.updatedAt),
  };
}

export function presentDelivery(d: DeliveryFields) {
  return {
    id: d.id,
    endpointId: d.endpointId,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    responseStatus: d.responseStatus,
    lastError: d.lastError,
    redeliveryOf: d.redeliveryOf,
    createdAt: iso(d.createdAt),
    lastAttemptAt: iso(d.lastAttemptAt),
    completedAt: iso(d.completedAt),
  };
}

// ---------------------------------------------------------------- helpers

async function findEndpoint(
  companyId: string,
  id: string,
  trx?: Knex.Transaction | Knex,
  forUpdate = false,
): Promise<WebhookEndpoint> {
  const query = WebhookEndpoint.scoped(companyId, trx).findById(id);
  const endpoint = await (forUpdate ? query.forUpdate() : query);
  if (!endpoint) throw new NotFoundError('webhook endpoint not found');
  return endpoint;
}

async function assertTarget(ctx: AppContext, url: string): Promise<void> {
  const problem = await checkTargetUrl(url, ctx.deps.config.webhooks);
  if (problem) throw new BadRequestError(`body.url: ${problem}`);
}

/** The endpoint a ping or redelivery goes to: it must exist in the company and be active (409). */
async function activeEndpoint(companyId: string, id: string, trx: Knex.Transaction) {
  const endpoint = await findEndpoint(companyId, id, trx);
  if (!endpoint.active) {
    throw new ConflictError('the endpoint is disabled; enable it with PATCH active true first');
  }
  return endpoint;
}

/**
 * Records a delivery made by hand (ping, redeliver) with its audit row, and starts its own workflow after
 * commit (all 5 attempts there).
 */
async function queueDelivery(
  ctx: AppContext,
  uow: { trx: Knex.Transaction; afterCommit(hook: () => Promise<void>): void },
  auth: Principal,
  fields: Omit<PartialModelObject<WebhookDelivery>, 'id' | 'companyId'>,
  audit: (
    delivery: WebhookDelivery,
  ) => Pick<AuditEntry, 'action' | 'resourceType' | 'resourceId' | 'details'>,
): Promise<WebhookDelivery> {
  const created = await WebhookDelivery.scoped(auth.companyId, uow.trx).insertAndFetch({
    id: randomUUID(),
    ...fields,
  });
  await recordAudit(uow.trx, { ...auditActor(auth, ctx.state.correlationId), ...audit(created) });
  uow.afterCommit(startAfterCommit(ctx, created));
  return created;
}

function startAfterCommit(ctx: AppContext, delivery: { id: string; companyId: string }) {
  return async () => {
    const { errors } = await startDeliveryWorkflows(ctx.deps.temporal, ctx.deps.knex, ctx.deps.config, [
      { ...delivery, correlationId: ctx.state.correlationId },
    ]);
    // saved all the same: the outbox dispatcher starts deliveries left unstarted
    if (errors.length > 0) ctx.state.log.error({ err: errors[0] }, 'delivery workflow start failed');
  };
}

// ---------------------------------------------------------------- routes

export const outgoingWebhookRoutes = [
  route({
    method: 'post',
    path: '/outgoing-webhooks',
    summary: 'Register an endpoint; the signing secret is shown once, in this answer',
    tag: TAG,
    access: ADMIN_SESSION,
    idempotent: true,
    needsPlan: true,
    body: createBody,
    responses: {
      201: { description: 'created, with its secret', schema: endpointWithSecretSchema },
      400: { description: 'invalid name, url (not https, private address) or events; unknown field' },
      402: { description: 'the company has not chosen a plan' },
      409: { description: "the plan's number of endpoints is reached (Free 1, Basic 5)" },
    },
    handler: async (ctx, { body }: { body: { name: string; url: string; events: string[] } }) => {
      const auth = principalOf(ctx);
      await assertTarget(ctx, body.url);
      const box = webhookSecretBox(ctx.deps.config.secretKey);
      const secret = generateWebhookSecret();
      const endpoint = await transact(
        ctx.deps.knex,
        async ({ trx }) => {
          // the company row lock makes count-then-insert safe against concurrent creations
          const company = await trx('companies')
            .where({ id: auth.companyId })
            .forUpdate()
            .first<{ plan: PlanName | null } | undefined>('plan');
          if (!company) throw new NotFoundError();
          // the route's plan guard answered 402 already; this read, under the lock, sees a plan dropped since
          if (!company.plan) throw new PaymentRequiredError(NO_PLAN_MESSAGE);
          const limit = planLimits(company.plan).webhookEndpoints;
          if (limit !== null) {
            const count = await WebhookEndpoint.scoped(auth.companyId, trx).resultSize();
            if (count >= limit) {
              throw new ConflictError(
                `the ${company.plan} plan allows ${limit} webhook endpoint${limit === 1 ? '' : 's'}; delete one or change the plan`,
              );
            }
          }
          const id = randomUUID();
          const created = await WebhookEndpoint.scoped(auth.companyId, trx).insertAndFetch({
            id,
            name: body.name,
            url: body.url,
            events: body.events,
            active: true,
            secretEncrypted: box.seal(id, secret),
            consecutiveFailures: 0,
          });
          await recordAudit(trx, {
            ...auditActor(auth, ctx.state.correlationId),
            action: 'webhook_endpoint.created',
            resourceType: 'webhook_endpoint',
            resourceId: id,
            details: { url: body.url, events: body.events },
          });
          return created;
        },
        { correlationId: ctx.state.correlationId },
      );
      return { status: 201, body: { ...presentEndpoint(endpoint), secret } };
    },
  }),

  route({
    method: 'get',
    path: '/outgoing-webhooks',
    summary: "The company's endpoints, newest first (page-number list)",
    tag: TAG,
    access: ADMIN_SESSION,
    query: pageQuerySchema,
    responses: { 200: { description: 'page of endpoints', schema: pageEnvelopeSchema(endpointSchema) } },
    handler: async (ctx, { query }: { query: PageQuery }) => {
      const auth = principalOf(ctx);
      // newest first: pageList orders by (created_at, id) descending
      const rows = WebhookEndpoint.scoped(auth.companyId, ctx.deps.knex);
      return { body: await pageList(rows, query, presentEndpoint) };
    },
  }),

  route({
    method: 'patch',
    path: '/outgoing-webhooks/:id',
    summary:
      'Change name, url, events; active false disables, active true re-enables and resets the failure count',
    tag: TAG,
    access: ADMIN_SESSION,
    params: uuidParams,
    body: patchBody,
    responses: {
      200: { description: 'the endpoint as it is now', schema: endpointSchema },
      400: { description: 'invalid field, private address, unknown field, empty body' },
      404: { description: 'no such endpoint in the company' },
    },
    handler: async (
      ctx,
      {
        params,
        body,
      }: {
        params: { id: string };
        body: { name?: string; url?: string; events?: string[]; active?: boolean };
      },
    ) => {
      const auth = principalOf(ctx);
      if (body.url !== undefined) await assertTarget(ctx, body.url);
      const endpoint = await transact(
        ctx.deps.knex,
        async ({ trx }) => {
          const current = await findEndpoint(auth.companyId, params.id, trx, true);
          const patch: Partial<WebhookEndpoint> = {};
          if (body.name !== undefined) patch.name = body.name;
          if (body.url !== undefined) patch.url = body.url;
          if (body.events !== undefined) patch.events = body.events;
          if (body.active === true) {
            Object.assign(patch, {
              active: true,
              consecutiveFailures: 0,
              disabledReason: null,
              disabledAt: null,
            });
          } else if (body.active === false && current.active) {
            // an endpoint already disabled keeps the reason and time it was disabled with
            Object.assign(patch, {
              active: false,
              disabledReason: 'disabled_by_admin',
              disabledAt: new Date(),
            });
          }
          const updated = await WebhookEndpoint.scoped(auth.companyId, trx).patchAndFetchById(
            current.id,
            patch,
          );
          await recordAudit(trx, {
            ...auditActor(auth, ctx.state.correlationId),
            action: 'webhook_endpoint.updated',
            resourceType: 'webhook_endpoint',
            resourceId: current.id,
            details: { changed: Object.keys(body), wasActive: current.active, active: updated.active },
          });
          return updated;
        },
        { correlationId: ctx.state.correlationId },
      );
      return { body: presentEndpoint(endpoint) };
    },
  }),

  route({
    method: 'delete',
    path: '/outgoing-webhooks/:id',
    summary: 'Remove an endpoint, with its delivery records; deliveries in flight stop',
    tag: TAG,
    access: ADMIN_SESSION,
    params: uuidParams,
    responses: { 204: { description: 'removed' }, 404: { description: 'no such endpoint in the company' } },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      const auth = principalOf(ctx);
      await transact(ctx.deps.knex, async ({ trx }) => {
        const endpoint = await findEndpoint(auth.companyId, params.id, trx, true);
        await WebhookEndpoint.scoped(auth.companyId, trx).deleteById(endpoint.id);
        await recordAudit(trx, {
          ...auditActor(auth, ctx.state.correlationId),
          action: 'webhook_endpoint.deleted',
          resourceType: 'webhook_endpoint',
          resourceId: endpoint.id,
          details: { url: endpoint.url },
        });
      });
      return { status: 204 };
    },
  }),

  route({
    method: 'post',
    path: '/outgoing-webhooks/:id/rotate-secret',
    summary:
      'New signing secret, shown once; the old one stops signing at once, also for deliveries in flight',
    tag: TAG,
    access: ADMIN_SESSION,
    params: uuidParams,
    responses: {
      200: { description: 'the endpoint with its new secret', schema: endpointWithSecretSchema },
      404: { description: 'no such endpoint in the company' },
    },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      const auth = principalOf(ctx);
      const box = webhookSecretBox(ctx.deps.config.secretKey);
      const secret = generateWebhookSecret();
      const endpoint = await transact(ctx.deps.knex, async ({ trx }) => {
        const current = await findEndpoint(auth.companyId, params.id, trx, true);
        const updated = await WebhookEndpoint.scoped(auth.companyId, trx).patchAndFetchById(current.id, {
          secretEncrypted: box.seal(current.id, secret),
        });
        await recordAudit(trx, {
          ...auditActor(auth, ctx.state.correlationId),
          action: 'webhook_endpoint.secret_rotated',
          resourceType: 'webhook_endpoint',
          resourceId: current.id,
        });
        return updated;
      });
      return { body: { ...presentEndpoint(endpoint), secret } };
    },
  }),

  route({
    method: 'post',
    path: '/outgoing-webhooks/:id/ping',
    summary: 'Send a ping event to this endpoint only (whatever its events list)',
    tag: TAG,
    access: ADMIN_SESSION,
    idempotent: true,
    params: uuidParams,
    responses: {
      202: { description: 'the ping delivery, queued', schema: deliverySchema },
      404: { description: 'no such endpoint in the company' },
      409: { description: 'the endpoint is disabled' },
    },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      const auth = principalOf(ctx);
      const delivery = await transact(
        ctx.deps.knex,
        async (uow) => {
          const endpoint = await activeEndpoint(auth.companyId, params.id, uow.trx);
          // through the outbox like every event; the delivery is recorded now so the answer can name it
          // (the dispatcher's fan-out finds it there and adds nothing)
          const data = { endpointId: endpoint.id };
          const eventId = await uow.emit({ companyId: auth.companyId, type: 'ping', data });
          const fields = {
            endpointId: endpoint.id,
            eventId,
            eventType: 'ping',
            eventData: data,
            // now() is the transaction's start time: the outbox row's created_at, the envelope's createdAt
            eventCreatedAt: uow.trx.fn.now(),
          };
          return queueDelivery(ctx, uow, auth, fields, (created) => ({
            action: 'webhook_endpoint.pinged',
            resourceType: 'webhook_endpoint',
            resourceId: endpoint.id,
            details: { eventId, deliveryId: created.id },
          }));
        },
        { correlationId: ctx.state.correlationId },
      );
      return { status: 202, body: presentDelivery(delivery) };
    },
  }),

  route({
    method: 'get',
    path: '/outgoing-webhooks/:id/deliveries',
    summary: "The endpoint's deliveries, newest first (page-number list); kept 30 days",
    tag: TAG,
    access: ADMIN_SESSION,
    params: uuidParams,
    query: pageQuerySchema,
    responses: {
      200: { description: 'page of deliveries', schema: pageEnvelopeSchema(deliverySchema) },
      404: { description: 'no such endpoint in the company' },
    },
    handler: async (ctx, { params, query }: { params: { id: string }; query: PageQuery }) => {
      const auth = principalOf(ctx);
      const endpoint = await findEndpoint(auth.companyId, params.id, ctx.deps.knex);
      const rows = WebhookDelivery.scoped(auth.companyId, ctx.deps.knex).where({ endpointId: endpoint.id });
      return { body: await pageList(rows, query, presentDelivery) };
    },
  }),

  route({
    method: 'post',
    path: '/outgoing-webhooks/deliveries/:deliveryId/redeliver',
    summary: 'Send the event of a delivery again, as a new delivery with the same webhook-id',
    tag: TAG,
    access: ADMIN_SESSION,
    idempotent: true,
    params: deliveryParams,
    responses: {
      202: { description: 'the new delivery, queued', schema: deliverySchema },
      404: { description: 'no such delivery in the company' },
      409: { description: 'the endpoint is disabled' },
    },
    handler: async (ctx, { params }: { params: { deliveryId: string } }) => {
      const auth = principalOf(ctx);
      const delivery = await transact(
        ctx.deps.knex,
        async (uow) => {
          const original = await WebhookDelivery.scoped(auth.companyId, uow.trx).findById(params.deliveryId);
          if (!original) throw new NotFoundError('delivery not found');
          const endpoint = await activeEndpoint(auth.companyId, original.endpointId, uow.trx);
          const fields = {
            endpointId: endpoint.id,
            eventId: original.eventId,
            eventType: original.eventType,
            eventData: original.eventData,
            eventCreatedAt: original.eventCreatedAt,
            redeliveryOf: original.id,
          };
          return queueDelivery(ctx, uow, auth, fields, (created) => ({
            action: 'webhook_delivery.redelivered',
            resourceType: 'webhook_delivery',
            resourceId: created.id,
            details: { redeliveryOf: original.id, eventId: original.eventId, endpointId: endpoint.id },
          }));
        },
        { correlationId: ctx.state.correlationId },
      );
      return { status: 202, body: presentDelivery(delivery) };
    },
  }),
];
