/**
 * Presenters: the fields of endpoints and deliveries a caller sees, listed one by one so a model never leaks
 * (the encrypted secret, the owning workflow). Response bodies are this service's choice (docs/webhooks.md).
 */
import type { Model } from 'objection';
import type { WebhookDelivery, WebhookEndpoint } from '../../db/models';

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
