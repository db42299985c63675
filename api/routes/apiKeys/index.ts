import { apiKeysList, createApiKey, revokeApiKey } from '../../../domain/identity/apiKeys';
import { presentApiKey } from '../../../domain/identity/present';
import { SCOPES, type Scope } from '../../../domain/identity/scopes';
import { pageList, type PageQuery } from '../../lists';
import { principalOf } from '../../middlewares/authenticate';
import { route } from '../../routing';
import { NOT_BLANK, pageEnvelopeSchema, pageQuerySchema, uuidParams } from '../../schemas';
import { inUnitOfWork } from '../../unitOfWork';

const apiKeySchema = {
  type: 'object',
  required: ['id', 'name', 'scopes', 'prefix', 'lastUsedAt', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    scopes: { type: 'array', items: { enum: SCOPES } },
    prefix: {
      type: 'string',
      description: 'svc_live_<identifier>: recognises the key; the secret is never listed',
    },
    ownerId: { type: 'string', format: 'uuid' },
    lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

export const apiKeyRoutes = [
  route({
    method: 'post',
    path: '/api-keys',
    summary: 'Create an API key (the full key is in `key`, shown this once)',
    tag: 'API keys',
    access: { roles: ['admin', 'employee'] },
    idempotent: true,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'scopes'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 80, pattern: NOT_BLANK },
        scopes: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: SCOPES } },
      },
    },
    responses: {
      201: {
        description: 'the created key; `key` is never shown again',
        schema: {
          ...apiKeySchema,
          required: [...apiKeySchema.required, 'key'],
          properties: { ...apiKeySchema.properties, key: { type: 'string', pattern: '^svc_live_' } },
        },
      },
      403: { description: 'an employee asked for an admin-only scope' },
    },
    handler: async (ctx, { body }: { body: { name: string; scopes: Scope[] } }) => {
      const auth = principalOf(ctx);
      const { row, key } = await inUnitOfWork(ctx, (uow) => createApiKey(ctx.deps, auth, uow, body));
      return { status: 201, body: { ...presentApiKey(row), key } };
    },
  }),
  route({
    method: 'get',
    path: '/api-keys',
    summary: "List API keys, newest first (admins: the company's; employees: their own)",
    tag: 'API keys',
    access: { roles: ['admin', 'employee'] },
    query: pageQuerySchema,
    responses: { 200: { description: 'page-number list', schema: pageEnvelopeSchema(apiKeySchema) } },
    handler: async (ctx, { query }: { query: PageQuery }) => {
      const q = apiKeysList(principalOf(ctx), ctx.deps.knex);
      return { body: await pageList(q, query, presentApiKey) };
    },
  }),
  route({
    method: 'delete',
    path: '/api-keys/:id',
    summary:
      'Revoke an API key (admins: any key of the company; employees: their own). Revoking twice is allowed.',
    tag: 'API keys',
    access: { roles: ['admin', 'employee'] },
    params: uuidParams,
    responses: {
      204: { description: 'revoked (or already revoked)' },
      404: { description: 'no such key, or another person’s key seen by an employee' },
    },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      const auth = principalOf(ctx);
      await inUnitOfWork(ctx, (uow) => revokeApiKey(auth, uow, params.id));
      return { status: 204 };
    },
  }),
];
