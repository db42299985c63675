import { randomUUID } from 'node:crypto';
import { ForbiddenError, NotFoundError } from '../../../common/errors';
import { recordAudit } from '../../../db/audit';
import { generateKey, keyPrefix } from '../../auth/apiKeys';
import { keysOf } from '../../auth/keys';
import { pageList, type PageQuery } from '../../lists';
import { principalOf } from '../../middlewares/authenticate';
import { mayHoldScope } from '../../policies/scopes';
import { route, SCOPES, type Scope } from '../../routing';
import { pageEnvelopeSchema, pageQuerySchema, uuidParams } from '../../schemas';
import { unitOfWork } from '../../../db/unitOfWork';

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

interface ApiKeyRow {
  id: string;
  name: string;
  scopes: Scope[];
  identifier: string;
  personId: string;
  lastUsedAt: Date | null;
  createdAt: Date;
}

function present(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    prefix: keyPrefix(row.identifier),
    ownerId: row.personId,
    lastUsedAt: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
  };
}

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
        name: { type: 'string', minLength: 1, maxLength: 80 },
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
      const refused = body.scopes.filter((s) => !mayHoldScope(auth.role, s));
      if (refused.length > 0)
        throw new ForbiddenError(`only admins may give the scopes ${refused.join(', ')}`);
      const { knex, config } = ctx.deps;
      const created = generateKey(keysOf(config).apiKey);
      const row = await unitOfWork(knex, async (trx) => {
        const [inserted] = (await trx('apiKeys')
          .insert({
            id: randomUUID(),
            companyId: auth.companyId,
            personId: auth.personId,
            name: body.name,
            scopes: body.scopes,
            identifier: created.identifier,
            secretFingerprint: created.secretFingerprint,
          })
          .returning('*')) as ApiKeyRow[];
        await recordAudit(trx, {
          companyId: auth.companyId,
          personId: auth.personId,
          action: 'api_key.created',
          resourceType: 'api_key',
          resourceId: inserted.id,
          correlationId: ctx.state.correlationId,
          details: { name: body.name, scopes: body.scopes },
        });
        return inserted;
      });
      return { status: 201, body: { ...present(row), key: created.key } };
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
      const auth = principalOf(ctx);
      const q = ctx.deps.knex('apiKeys').where({ companyId: auth.companyId }).whereNull('revokedAt');
      if (auth.role !== 'admin') void q.where({ personId: auth.personId });
      return { body: await pageList(q, query, present) };
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
      await unitOfWork(ctx.deps.knex, async (trx) => {
        const q = trx('apiKeys').where({ id: params.id, companyId: auth.companyId }).forUpdate();
        if (auth.role !== 'admin') void q.where({ personId: auth.personId });
        const key = (await q.first()) as (ApiKeyRow & { revokedAt: Date | null }) | undefined;
        if (!key) throw new NotFoundError('API key not found');
        if (key.revokedAt) return;
        await trx('apiKeys').where({ id: key.id }).update({ revokedAt: trx.fn.now() });
        await recordAudit(trx, {
          companyId: auth.companyId,
          personId: auth.personId,
          action: 'api_key.revoked',
          resourceType: 'api_key',
          resourceId: key.id,
          correlationId: ctx.state.correlationId,
        });
      });
      return { status: 204 };
    },
  }),
];
