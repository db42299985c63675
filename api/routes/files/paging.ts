/**
 * List envelopes for the files routes (spec "List envelopes"). A minimal local version: the shared one
 * (api/lists.ts) is being written on another branch; these functions keep the same shapes.
 */
import { createHmac } from 'node:crypto';
import type { Config } from '../../../common/config';
import { BadRequestError } from '../../../common/errors';
import { constantTimeEqual, deriveKey } from '../../../common/secrets';

export const limitSchema = { type: 'integer', minimum: 1, maximum: 100, default: 20 } as const;

export const cursorQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { cursor: { type: 'string', minLength: 1, maxLength: 200 }, limit: limitSchema },
} as const;

export const pageQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1 }, limit: limitSchema },
} as const;

export function cursorEnvelopeSchema(item: object) {
  return {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: { type: 'array', items: item },
      meta: {
        type: 'object',
        required: ['nextCursor', 'hasMore'],
        properties: { nextCursor: { type: ['string', 'null'] }, hasMore: { type: 'boolean' } },
      },
    },
  };
}

export function pageEnvelopeSchema(item: object) {
  return {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: { type: 'array', items: item },
      meta: {
        type: 'object',
        required: ['page', 'limit', 'total', 'totalPages'],
        properties: {
          page: { type: 'integer' },
          limit: { type: 'integer' },
          total: { type: 'integer' },
          totalPages: { type: 'integer' },
        },
      },
    },
  };
}

function tag(config: Config, scope: string, position: string): string {
  return createHmac('sha256', deriveKey(config.secretKey, 'cursor'))
    .update(`${scope}:${position}`)
    .digest('base64url')
    .slice(0, 22);
}

/** An opaque, signed cursor naming the last item seen (`scope` keeps one list's cursor out of another). */
export function encodeCursor(config: Config, scope: string, position: string): string {
  return `${Buffer.from(position).toString('base64url')}.${tag(config, scope, position)}`;
}

export function decodeCursor(config: Config, scope: string, cursor: string): string {
  const [encoded, signature] = cursor.split('.');
  if (encoded && signature) {
    const position = Buffer.from(encoded, 'base64url').toString('utf8');
    if (constantTimeEqual(signature, tag(config, scope, position))) return position;
  }
  throw new BadRequestError('query.cursor is not a cursor of this list');
}

export function pageMeta(page: number, limit: number, total: number) {
  return { page, limit, total, totalPages: Math.ceil(total / limit) };
}
