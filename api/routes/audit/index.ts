/**
 * The audit log (issue 15): `audit:read` — admins' sessions and keys holding it; employees 403. Newest
 * first, cursor list; filters by actor, key, action (exact or `prefix*`), resource and time. Unknown query
 * parameters answer 400 (the query schema is closed). Entries are append-only (README "Audit log").
 */
import { presentAuditEntry } from '../../../domain/audit/present';
import { auditListName, auditLogOf, type AuditFilters } from '../../../domain/audit/queries';
import { principalOf } from '../../middlewares/authenticate';
import { cursorEnvelope, cursorList, cursorQuerySchema, type CursorQuery } from '../../lists';
import { route } from '../../routing';

const TAG = 'Audit log';

const nullableString = { type: ['string', 'null'] } as const;

export const auditEntrySchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'time',
    'action',
    'actor',
    'resource',
    'outcome',
    'correlationId',
    'clientAddress',
    'changes',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    time: { type: 'string', format: 'date-time' },
    action: { type: 'string', description: 'dotted name, e.g. file.deleted (README "Audit log" lists them)' },
    actor: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'personId', 'apiKeyId', 'keyPrefix'],
      properties: {
        type: { enum: ['person', 'apiKey', 'system'] },
        personId: { ...nullableString, description: 'the person; for a key its owner; null for the service' },
        apiKeyId: { ...nullableString, description: 'the key that did it, when a key did it' },
        keyPrefix: { ...nullableString, description: 'svc_live_<identifier> of that key' },
      },
    },
    resource: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id'],
      properties: { type: { type: 'string' }, id: nullableString },
    },
    outcome: { enum: ['success', 'failure', 'denied'] },
    correlationId: nullableString,
    clientAddress: nullableString,
    changes: {
      type: 'object',
      description: 'the fields changed, by name (never secrets, passwords, tokens or cell values)',
    },
  },
} as const;

const uuid = { type: 'string', format: 'uuid' } as const;
const name = { type: 'string', minLength: 1, maxLength: 200 } as const;

const auditQuery = {
  ...cursorQuerySchema,
  properties: {
    ...cursorQuerySchema.properties,
    actorId: { ...uuid, description: 'the person who acted (for a key: its owner)' },
    apiKeyId: { ...uuid, description: 'the key that acted' },
    action: { ...name, description: 'exact action, or a prefix ending with * (file.*)' },
    resourceType: name,
    resourceId: name,
    from: { type: 'string', format: 'date-time', description: 'entries at or after this time' },
    to: { type: 'string', format: 'date-time', description: 'entries before this time' },
  },
} as const;

export const auditRoutes = [
  route({
    method: 'get',
    path: '/audit-log',
    summary:
      "The company's audit log, newest first (cursor list; audit:read: admins' sessions and keys holding it)",
    tag: TAG,
    access: { roles: ['admin'], keyScope: 'audit:read' },
    query: auditQuery,
    responses: {
      200: { description: 'a page of entries', schema: cursorEnvelope(auditEntrySchema) },
      403: { description: 'an employee, or a key without audit:read' },
    },
    handler: async (ctx, { query }: { query: CursorQuery & AuditFilters }) => {
      const auth = principalOf(ctx);
      const { cursor, limit, ...filters } = query;
      return {
        body: await cursorList(
          auditLogOf(auth, ctx.deps.knex, filters),
          { cursor, limit },
          {
            // a cursor belongs to its filters: another filter set refuses it
            list: auditListName(filters),
            companyId: auth.companyId,
            secretKey: ctx.deps.config.secretKey,
            present: presentAuditEntry,
          },
        ),
      };
    },
  }),
];
