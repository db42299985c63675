/**
 * The one place where a webhook endpoint changes state. An endpoint is active, or disabled with a reason and
 * a time: by its admin (`disabled_by_admin`), because the receiver answered 410 (`receiver_gone`), or after
 * WEBHOOK_FAILURES_BEFORE_DISABLE failed deliveries in a row (`consecutive_failures`). Enabling clears the
 * reason and the failure count. Every transition runs inside the caller's transaction.
 */
import { randomUUID } from 'node:crypto';
import { notify } from '../notifications/notify';
import type { Knex } from 'knex';
import type { Logger } from '../../common/logger';
import { recordAudit } from '../audit/record';
import type { WebhookDisabledReason } from '../../db/models';
import { WEBHOOK_FAILURES_BEFORE_DISABLE } from './policy';

/**
 * Disables the endpoint if it is active: true when this call disabled it. An endpoint already disabled
 * keeps the reason and the time it was disabled with.
 */
export async function disableEndpoint(
  trx: Knex.Transaction,
  endpointId: string,
  reason: WebhookDisabledReason,
): Promise<boolean> {
  const disabled = await trx('webhookEndpoints')
    .where({ id: endpointId, active: true })
    .update({ active: false, disabledReason: reason, disabledAt: trx.fn.now(), updatedAt: trx.fn.now() });
  return disabled > 0;
}

/** Enables the endpoint (again): no reason, no time, no failures counted. */
export async function enableEndpoint(trx: Knex.Transaction, endpointId: string): Promise<void> {
  await trx('webhookEndpoints').where({ id: endpointId }).update({
    active: true,
    consecutiveFailures: 0,
    disabledReason: null,
    disabledAt: null,
    updatedAt: trx.fn.now(),
  });
}

/**
 * Disables an active endpoint for a reason the service found (410, failures in a row): audited with no
 * person, logged, and shown on the endpoint.
 */
export async function disableAutomatically(
  trx: Knex.Transaction,
  logger: Logger,
  endpoint: { id: string; companyId: string },
  reason: Exclude<WebhookDisabledReason, 'disabled_by_admin'>,
  details: Record<string, unknown>,
): Promise<boolean> {
  if (!(await disableEndpoint(trx, endpoint.id, reason))) return false;
  await recordAudit(trx, {
    companyId: endpoint.companyId,
    personId: null,
    action: 'webhook_endpoint.disabled',
    resourceType: 'webhook_endpoint',
    resourceId: endpoint.id,
    details: { reason, automatic: true, ...details },
  });
  await notify(trx, {
    companyId: endpoint.companyId,
    kind: 'webhook_endpoint.disabled',
    to: { admins: true },
    resource: { type: 'webhook_endpoint', id: endpoint.id },
    data: { endpointId: endpoint.id, reason },
    // one per disable: the endpoint may be enabled and disabled again later
    cause: `webhook_endpoint:${endpoint.id}:disabled:${randomUUID()}`,
  });
  logger.warn({ endpointId: endpoint.id, reason, ...details }, 'webhook endpoint disabled automatically');
  return true;
}

/**
 * Counts one more failed delivery in a row; the update holds the endpoint's row lock, so concurrent
 * deliveries count one by one, and the WEBHOOK_FAILURES_BEFORE_DISABLE-th disables the endpoint.
 * (A delivery that succeeds sets the count back to 0 in the statement that records it: store.ts.)
 */
export async function countFailedDelivery(
  trx: Knex.Transaction,
  logger: Logger,
  endpointId: string,
  details: Record<string, unknown>,
): Promise<void> {
  const counted = await trx('webhookEndpoints')
    .where({ id: endpointId })
    .increment('consecutiveFailures', 1)
    .returning<Array<{ companyId: string; consecutiveFailures: number; active: boolean }>>([
      'companyId',
      'consecutiveFailures',
      'active',
    ]);
  const endpoint = counted[0];
  if (endpoint?.active && endpoint.consecutiveFailures >= WEBHOOK_FAILURES_BEFORE_DISABLE) {
    await disableAutomatically(
      trx,
      logger,
      { id: endpointId, companyId: endpoint.companyId },
      'consecutive_failures',
      {
        consecutiveFailures: endpoint.consecutiveFailures,
        ...details,
      },
    );
  }
}
