/** Schemas shared by several routes (and by the OpenAPI document). */
import { MAX_DOWNLOAD_LINK_SECONDS } from '../common/config';

export { NOT_BLANK } from './validation';

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

/** The query of a route answering a short-lived signed link: `expiresIn` seconds, at most an hour. */
export const signedLinkQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { expiresIn: { type: 'integer', minimum: 1, maximum: MAX_DOWNLOAD_LINK_SECONDS } },
} as const;

/** The 200 answer of a route answering a short-lived signed link. */
export const signedLinkResponse = {
  description: 'the link and when it expires',
  schema: {
    type: 'object',
    properties: {
      url: { type: 'string', format: 'uri' },
      expiresAt: { type: 'string', format: 'date-time' },
      expiresIn: { type: 'integer' },
    },
  },
} as const;

/** Lists have one implementation: api/lists.ts (query schemas, envelopes, pageList, cursorList). */
export {
  pageQuerySchema,
  cursorQuerySchema,
  pageEnvelope as pageEnvelopeSchema,
  cursorEnvelope,
} from './lists';
