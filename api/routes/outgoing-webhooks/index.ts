/**
 * Outgoing webhooks (spec "Outgoing webhooks"): admin session only; API keys and employees get 403 from the
 * route table's access rule (domain/webhooks/access.ts). Handlers call the webhooks domain
 * (domain/webhooks/); response bodies are this service's choice (docs/webhooks.md).
 */
import {
  checkTarget,
  createEndpoint,
  deleteEndpoint,
  listEndpoints,
  rotateSecret,
  updateEndpoint,
} from '../../../domain/webhooks/endpoints';
import { listDeliveries, pingEndpoint, redeliver } from '../../../domain/webhooks/deliveries';
import { MANAGE_WEBHOOKS } from '../../../domain/webhooks/access';
import { presentDelivery, presentEndpoint } from '../../../domain/webhooks/present';
import { pageList, type PageQuery } from '../../lists';
import { principalOf } from '../../middlewares/authenticate';
import { route } from '../../routing';
import { domainDeps, inUnitOfWork } from '../../unitOfWork';
import { pageEnvelopeSchema, pageQuerySchema, uuidParams } from '../../schemas';
import {
  createBody,
  deliveryParams,
  deliverySchema,
  endpointSchema,
  endpointWithSecretSchema,
  patchBody,
  type CreateBody,
  type PatchBody,
} from './schemas';

const TAG = 'Outgoing webhooks';

export const outgoingWebhookRoutes = [
  route({
    method: 'post',
    path: '/outgoing-webhooks',
    summary: 'Register an endpoint; the signing secret is shown once, in this answer',
    tag: TAG,
    access: MANAGE_WEBHOOKS,
    idempotent: true,
    needsPlan: true,
    body: createBody,
    responses: {
      201: { description: 'created, with its secret', schema: endpointWithSecretSchema },
      400: { description: 'invalid name, url (not https, private address) or events; unknown field' },
      402: { description: 'the company has not chosen a plan' },
      409: { description: "the plan's number of endpoints is reached (Free 1, Basic 5)" },
    },
    handler: async (ctx, { body }: { body: CreateBody }) => {
      const url = await checkTarget(ctx.deps, body.url);
      const { endpoint, secret } = await inUnitOfWork(ctx, (uow) =>
        createEndpoint(ctx.deps, principalOf(ctx), uow, { ...body, url }),
      );
      return { status: 201, body: { ...presentEndpoint(endpoint), secret } };
    },
  }),

  route({
    method: 'get',
    path: '/outgoing-webhooks',
    summary: "The company's endpoints, newest first (page-number list)",
    tag: TAG,
    access: MANAGE_WEBHOOKS,
    query: pageQuerySchema,
    responses: { 200: { description: 'page of endpoints', schema: pageEnvelopeSchema(endpointSchema) } },
    handler: async (ctx, { query }: { query: PageQuery }) => {
      // newest first: pageList orders by (created_at, id) descending
      const endpoints = listEndpoints(principalOf(ctx), ctx.deps.knex);
      return { body: await pageList(endpoints, query, presentEndpoint) };
    },
  }),

  route({
    method: 'patch',
    path: '/outgoing-webhooks/:id',
    summary:
      'Change name, url, events; active false disables, active true re-enables and resets the failure count',
    tag: TAG,
    access: MANAGE_WEBHOOKS,
    params: uuidParams,
    body: patchBody,
    responses: {
      200: { description: 'the endpoint as it is now', schema: endpointSchema },
      400: { description: 'invalid field, private address, unknown field, empty body' },
      404: { description: 'no such endpoint in the company' },
    },
    handler: async (ctx, { params, body }: { params: { id: string }; body: PatchBody }) => {
      const { url, ...rest } = body;
      const change = url === undefined ? rest : { ...rest, url: await checkTarget(ctx.deps, url) };
      const endpoint = await inUnitOfWork(ctx, (uow) =>
        updateEndpoint(principalOf(ctx), uow, params.id, change),
      );
      return { body: presentEndpoint(endpoint) };
    },
  }),

  route({
    method: 'delete',
    path: '/outgoing-webhooks/:id',
    summary: 'Remove an endpoint, with its delivery records; deliveries in flight stop',
    tag: TAG,
    access: MANAGE_WEBHOOKS,
    params: uuidParams,
    responses: { 204: { description: 'removed' }, 404: { description: 'no such endpoint in the company' } },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      await inUnitOfWork(ctx, (uow) => deleteEndpoint(principalOf(ctx), uow, params.id));
      return { status: 204 };
    },
  }),

  route({
    method: 'post',
    path: '/outgoing-webhooks/:id/rotate-secret',
    summary:
      'New signing secret, shown once; the old one stops signing at once, also for deliveries in flight',
    tag: TAG,
    access: MANAGE_WEBHOOKS,
    params: uuidParams,
    responses: {
      200: { description: 'the endpoint with its new secret', schema: endpointWithSecretSchema },
      404: { description: 'no such endpoint in the company' },
    },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      const { endpoint, secret } = await inUnitOfWork(ctx, (uow) =>
        rotateSecret(ctx.deps, principalOf(ctx), uow, params.id),
      );
      return { body: { ...presentEndpoint(endpoint), secret } };
    },
  }),

  route({
    method: 'post',
    path: '/outgoing-webhooks/:id/ping',
    summary: 'Send a ping event to this endpoint only (whatever its events list)',
    tag: TAG,
    access: MANAGE_WEBHOOKS,
    idempotent: true,
    params: uuidParams,
    responses: {
      202: { description: 'the ping delivery, queued', schema: deliverySchema },
      404: { description: 'no such endpoint in the company' },
      409: { description: 'the endpoint is disabled' },
    },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      const delivery = await inUnitOfWork(ctx, (uow) =>
        pingEndpoint(domainDeps(ctx), principalOf(ctx), uow, params.id),
      );
      return { status: 202, body: presentDelivery(delivery) };
    },
  }),

  route({
    method: 'get',
    path: '/outgoing-webhooks/:id/deliveries',
    summary: "The endpoint's deliveries, newest first (page-number list); kept 30 days",
    tag: TAG,
    access: MANAGE_WEBHOOKS,
    params: uuidParams,
    query: pageQuerySchema,
    responses: {
      200: { description: 'page of deliveries', schema: pageEnvelopeSchema(deliverySchema) },
      404: { description: 'no such endpoint in the company' },
    },
    handler: async (ctx, { params, query }: { params: { id: string }; query: PageQuery }) => {
      const deliveries = await listDeliveries(principalOf(ctx), ctx.deps.knex, params.id);
      return { body: await pageList(deliveries.query, query, presentDelivery) };
    },
  }),

  route({
    method: 'post',
    path: '/outgoing-webhooks/deliveries/:deliveryId/redeliver',
    summary: 'Send the event of a delivery again, as a new delivery with the same webhook-id',
    tag: TAG,
    access: MANAGE_WEBHOOKS,
    idempotent: true,
    params: deliveryParams,
    responses: {
      202: { description: 'the new delivery, queued', schema: deliverySchema },
      404: { description: 'no such delivery in the company' },
      409: { description: 'the endpoint is disabled' },
    },
    handler: async (ctx, { params }: { params: { deliveryId: string } }) => {
      const delivery = await inUnitOfWork(ctx, (uow) =>
        redeliver(domainDeps(ctx), principalOf(ctx), uow, params.deliveryId),
      );
      return { status: 202, body: presentDelivery(delivery) };
    },
  }),
];
