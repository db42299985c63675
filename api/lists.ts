import type { Knex } from 'knex';

export interface PageQuery {
  page: number;
  limit: number;
}

export interface PageEnvelope<T> {
  data: T[];
  meta: { page: number; limit: number; total: number; totalPages: number };
}

/** Page-number list: `query` must already be scoped and ordered; total comes from the same filter. */
export async function pageList<T, R>(
  query: Knex.QueryBuilder,
  { page, limit }: PageQuery,
  present: (row: R) => T,
): Promise<PageEnvelope<T>> {
  const countRow = (await query.clone().clearSelect().clearOrder().count({ total: '*' }).first()) as
    { total: string | number } | undefined;
  const total = Number(countRow?.total ?? 0);
  const rows = (await query.offset((page - 1) * limit).limit(limit)) as R[];
  return {
    data: rows.map(present),
    meta: { page, limit, total, totalPages: Math.ceil(total / limit) },
  };
}
