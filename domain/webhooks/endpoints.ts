/**
 * Endpoint commands and queries: register, change, rotate the secret of, and remove an endpoint; list and
 * read them. Each command takes its dependencies, the acting admin and the unit of work it runs in
 * (db/transaction.ts `transact`), writes its audit entry there, and never sees an HTTP request.
 */
import { randomUUID } from 'node:crypto';
import { BadRequestError, NotFoundError } from '../../common/errors';
import type { Config } from '../../common/config';
import { PlanLimitError, requirePlan } from '../plans/errors';
import { planLimits } from '../plans/plans';
import { auditActor, recordAudit } from '../audit/record';
import { Company, type WebhookEndpoint } from '../../db/models';
import type { EventType, UnitOfWork } from '../../db/transaction';
import { assertMayManage, endpointFor, endpointsOf, type Actor, type Db } from './access';
import { generateWebhookSecret, webhookSecretBox } from './secret';
import { disableEndpoint, enableEndpoint } from './state';
import { checkTargetUrl, type Resolver } from './targets';

/** A target URL that passed the address guard (`checkTarget`); commands take no other. */
export type CheckedUrl = string & { readonly checkedTarget: unique symbol };

/**
 * The address guard at creation and at a change of URL: shape, https, and every address the host resolves
 * to (400 naming `body.url`). Run before the unit of work, so no transaction waits on DNS.
 */
export async function checkTarget(
  deps: { config: Pick<Config, 'webhooks'>; resolver?: Resolver },
  url: string,
): Promise<CheckedUrl> {
  const problem = await checkTargetUrl(url, deps.config.webhooks, deps.resolver);
  if (problem) throw new BadRequestError(`body.url: ${problem}`);
  return url as CheckedUrl;
}

export interface NewEndpoint {
  name: string;
  url: CheckedUrl;
  events: EventType[];
}

export interface EndpointChange {
  name?: string;
  url?: CheckedUrl;
  events?: EventType[];
  /** false disables (by the admin); true enables again and resets the failure count */
  active?: boolean;
}

type SecretDeps = { config: Pick<Config, 'secretKey'> };

/** A new signing secret for the endpoint, and its sealed form to store. */
function newSecret(deps: SecretDeps, endpointId: string): { secret: string; sealed: string } {
  const secret = generateWebhookSecret();
  return { secret, sealed: webhookSecretBox(deps.config.secretKey).seal(endpointId, secret) };
}

/** An endpoint with its signing secret, which is shown only in this answer. */
export interface EndpointWithSecret {
  endpoint: WebhookEndpoint;
  secret: string;
}

/**
 * Registers an endpoint within the plan's number of endpoints (PlanLimitError over it, PlanRequiredError
 * without a plan: 409 and 402 over HTTP), with a new
 * signing secret stored encrypted.
 */
export async function createEndpoint(
  deps: SecretDeps,
  actor: Actor,
  uow: UnitOfWork,
  input: NewEndpoint,
): Promise<EndpointWithSecret> {
  assertMayManage(actor);
  const { trx } = uow;
  // the company row lock makes count-then-insert safe against concurrent creations
  const company = await Company.scoped(actor.companyId, trx).select('plan').forUpdate().first();
  if (!company) throw new NotFoundError();
  // the route's plan guard answered 402 already; this read, under the lock, sees a plan dropped since
  const plan = requirePlan(company.plan);
  const limit = planLimits(plan).webhookEndpoints;
  if (limit !== null) {
    const count = await endpointsOf(actor, trx).resultSize();
    if (count >= limit) {
      throw new PlanLimitError(
        `the ${plan} plan allows ${limit} webhook endpoint${limit === 1 ? '' : 's'}; delete one or change the plan`,
      );
    }
  }
  const id = randomUUID();
  const { secret, sealed } = newSecret(deps, id);
  const endpoint = await endpointsOf(actor, trx).insertAndFetch({
    id,
    name: input.name,
    url: input.url,
    events: input.events,
    active: true,
    secretEncrypted: sealed,
    consecutiveFailures: 0,
  });
  await recordAudit(trx, {
    ...auditActor(actor, uow.correlationId),
    action: 'webhook_endpoint.created',
    resourceType: 'webhook_endpoint',
    resourceId: id,
    details: { url: input.url, events: input.events },
  });
  return { endpoint, secret };
}

/**
 * Changes name, url, events; `active` goes through the endpoint's state transitions (state.ts): false
 * disables it by the admin, true enables it again.
 */
export async function updateEndpoint(
  actor: Actor,
  uow: UnitOfWork,
  id: string,
  change: EndpointChange,
): Promise<WebhookEndpoint> {
  assertMayManage(actor);
  const { trx } = uow;
  const current = await endpointFor(actor, id, trx, { forUpdate: true });
  if (change.active === true) await enableEndpoint(trx, current.id);
  else if (change.active === false) await disableEndpoint(trx, current.id, 'disabled_by_admin');
  const patch: Partial<WebhookEndpoint> = {};
  if (change.name !== undefined) patch.name = change.name;
  if (change.url !== undefined) patch.url = change.url;
  if (change.events !== undefined) patch.events = change.events;
  const updated = await endpointsOf(actor, trx).patchAndFetchById(current.id, patch);
  await recordAudit(trx, {
    ...auditActor(actor, uow.correlationId),
    action: 'webhook_endpoint.updated',
    resourceType: 'webhook_endpoint',
    resourceId: current.id,
    details: { changed: Object.keys(change), wasActive: current.active, active: updated.active },
  });
  return updated;
}

/** Removes an endpoint; its delivery records go with it (the foreign key cascades), so attempts stop. */
export async function deleteEndpoint(actor: Actor, uow: UnitOfWork, id: string): Promise<void> {
  assertMayManage(actor);
  const { trx } = uow;
  const endpoint = await endpointFor(actor, id, trx, { forUpdate: true });
  await endpointsOf(actor, trx).deleteById(endpoint.id);
  await recordAudit(trx, {
    ...auditActor(actor, uow.correlationId),
    action: 'webhook_endpoint.deleted',
    resourceType: 'webhook_endpoint',
    resourceId: endpoint.id,
    details: { url: endpoint.url },
  });
}

/**
 * A new signing secret, shown once; the old one stops signing at once, also for deliveries in flight
 * (every attempt reads the endpoint's current secret).
 */
export async function rotateSecret(
  deps: SecretDeps,
  actor: Actor,
  uow: UnitOfWork,
  id: string,
): Promise<EndpointWithSecret> {
  assertMayManage(actor);
  const current = await endpointFor(actor, id, uow.trx, { forUpdate: true });
  const { secret, sealed } = newSecret(deps, current.id);
  const endpoint = await endpointsOf(actor, uow.trx).patchAndFetchById(current.id, {
    secretEncrypted: sealed,
  });
  await recordAudit(uow.trx, {
    ...auditActor(actor, uow.correlationId),
    action: 'webhook_endpoint.secret_rotated',
    resourceType: 'webhook_endpoint',
    resourceId: current.id,
  });
  return { endpoint, secret };
}

/** The company's endpoints, as a query the caller pages (newest first). */
export function listEndpoints(actor: Actor, db: Db) {
  assertMayManage(actor);
  return endpointsOf(actor, db);
}

/** One endpoint of the company (404 otherwise). */
export async function getEndpoint(actor: Actor, db: Db, id: string): Promise<WebhookEndpoint> {
  assertMayManage(actor);
  return endpointFor(actor, id, db);
}
