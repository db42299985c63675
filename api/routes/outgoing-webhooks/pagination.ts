/**
 * Page-number lists for the webhook routes (spec "List envelopes": `page` from 1, `limit` 1 to 100,
 * default 20; `{data, meta: {page, limit, total, totalPages}}`).
 * TEMPORARY: a local copy until the shared list implementation (api/lists.ts, branch feat/platform) is
 * merged; swap these for the shared ones then. The shapes are the same.
 */
import type { Model, QueryBuilder } from 'objection';

export const pageQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    page: { type: 'integer', minimum: 1, default: 1, description: 'page number, from 1' },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 20,
      description: 'items per page, 1 to 100',
    },
  },
} as const;

export function pageEnvelopeSchema(item: Record<string, unknown>) {
  return {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: { type: 'array', items: item },
      meta: {
        type: 'object',
        required: ['page', 'limit', 'total', 'totalPages'],
        properties: {
          page: { type: 'integer', minimum: 1 },
          limit: { type: 'integer', minimum: 1, maximum: 100 },
          total: { type: 'integer', minimum: 0 },
          totalPages: { type: 'integer', minimum: 0 },
        },
      },
    },
  };
}

export interface PageQuery {
  page: number;
  limit: number;
}

export async function pageOf<M extends Model, T>(
  query: QueryBuilder<M, M[]>,
  { page, limit }: PageQuery,
  present: (row: M) => T,
): Promise<{ data: T[]; meta: { page: number; limit: number; total: number; totalPages: number } }> {
  const { results, total } = await query.page(page - 1, limit);
  return {
    data: results.map(present),
    meta: { page, limit, total, totalPages: Math.ceil(total / limit) },
  };
}
