/**
 * Webhook numbers fixed by the spec, and the delivery retry policy built from configuration.
 * Imported by workflow code too: no Node built-ins here.
 */
export const WEBHOOK_MAX_ATTEMPTS = 5;
export const WEBHOOK_FAILURES_BEFORE_DISABLE = 20;
export const WEBHOOK_DELIVERY_RETENTION_DAYS = 30;
export const WEBHOOK_SCHEMA_VERSION = 1;
export const WEBHOOK_USER_AGENT = 'Service-Webhooks/1.0';

/** What a delivery workflow needs to know about timing; fixed at start so replays are deterministic. */
export interface DeliveryPolicy {
  initialIntervalMs: number;
  backoffCoefficient: number;
  maximumIntervalMs: number;
  attemptTimeoutMs: number;
}

export function deliveryPolicy(webhooks: {
  retryInitialMs: number;
  retryBackoffCoefficient: number;
  retryMaxIntervalMs: number;
  attemptTimeoutMs: number;
}): DeliveryPolicy {
  return {
    initialIntervalMs: webhooks.retryInitialMs,
    backoffCoefficient: webhooks.retryBackoffCoefficient,
    maximumIntervalMs: Math.max(webhooks.retryMaxIntervalMs, webhooks.retryInitialMs),
    attemptTimeoutMs: webhooks.attemptTimeoutMs,
  };
}

/** The delays between attempts this policy gives (for docs and tests): 4 delays for 5 attempts. */
export function retryDelaysMs(policy: DeliveryPolicy): number[] {
  const delays: number[] = [];
  for (let i = 0; i < WEBHOOK_MAX_ATTEMPTS - 1; i++) {
    delays.push(
      Math.min(policy.initialIntervalMs * policy.backoffCoefficient ** i, policy.maximumIntervalMs),
    );
  }
  return delays;
}

/**
 * The longest wait between two checks of a held delivery (README "Billing"): a hold as long as the 30-day
 * retention stays a short workflow history (about 1,500 checks).
 */
export const WEBHOOK_HOLD_MAX_MS = 30 * 60_000;

/**
 * The wait before checking again, for the `n`-th time (0-based), whether a suspended company's delivery may
 * be attempted: the first retry delay, doubled at each check, at most WEBHOOK_HOLD_MAX_MS. Attempts held do
 * not count against the 5.
 */
export function holdDelayMs(policy: DeliveryPolicy, n: number): number {
  return Math.min(policy.initialIntervalMs * 2 ** Math.min(n, 30), WEBHOOK_HOLD_MAX_MS);
}

/** Failure types the attempt activity throws; the workflow reads them to decide the final status. */
export const FAILURE = {
  /** the receiver did not answer 2xx, or did not answer in time; retried */
  attemptFailed: 'WebhookAttemptFailed',
  /** the receiver answered 410: not retried, the endpoint is disabled */
  receiverGone: 'WebhookReceiverGone',
  /** the endpoint is disabled: nothing (more) is sent */
  endpointInactive: 'WebhookEndpointInactive',
  /** the delivery record no longer exists (endpoint deleted, retention): nothing to do */
  deliveryGone: 'WebhookDeliveryGone',
  /** another workflow owns the delivery and attempts it: this one leaves the record alone */
  ownedElsewhere: 'WebhookDeliveryOwnedElsewhere',
} as const;
