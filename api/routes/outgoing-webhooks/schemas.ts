/** Request and response schemas of the outgoing-webhook routes (validation and the OpenAPI document). */
import type { FromSchema } from 'json-schema-to-ts';
import { EVENT_TYPES } from '../../../db/transaction';
import { NOT_BLANK, uuidParams } from '../../schemas';

const nameSchema = { type: 'string', minLength: 1, maxLength: 100, pattern: NOT_BLANK } as const;
const urlSchema = { type: 'string', minLength: 1, maxLength: 2048 } as const;
const eventsSchema = {
  type: 'array',
  minItems: 1,
  uniqueItems: true,
  items: { enum: [...EVENT_TYPES] },
} as const;

export const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'url', 'events'],
  properties: { name: nameSchema, url: urlSchema, events: eventsSchema },
} as const;

export const patchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { name: nameSchema, url: urlSchema, events: eventsSchema, active: { type: 'boolean' } },
} as const;

/** `:deliveryId`, a UUID like every id in a path. */
export const deliveryParams = {
  ...uuidParams,
  required: ['deliveryId'],
  properties: { deliveryId: uuidParams.properties.id },
} as const;

const timestamp = { type: ['string', 'null'], format: 'date-time' } as const;

export const endpointSchema = {
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

export const endpointWithSecretSchema = {
  ...endpointSchema,
  required: [...endpointSchema.required, 'secret'],
  properties: {
    ...endpointSchema.properties,
    secret: { type: 'string', pattern: '^whsec_', description: 'the signing secret, shown only now' },
  },
};

export const deliverySchema = {
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

export type CreateBody = FromSchema<typeof createBody>;
export type PatchBody = FromSchema<typeof patchBody>;
