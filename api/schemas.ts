/** Schemas shared by several routes (and by the OpenAPI document). */
export const tokenPairSchema = {
  type: 'object',
  required: ['accessToken', 'refreshToken', 'tokenType', 'expiresIn'],
  properties: {
    accessToken: { type: 'string' },
    refreshToken: { type: 'string' },
    tokenType: { const: 'Bearer' },
    expiresIn: { const: 900 },
  },
} as const;

export const uuidParams = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
} as const;

/** Lists have one implementation: api/lists.ts (query schemas, envelopes, pageList, cursorList). */
export {
  pageQuerySchema,
  cursorQuerySchema,
  pageEnvelope as pageEnvelopeSchema,
  cursorEnvelope,
} from './lists';
