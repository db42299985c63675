/**
 * Lists, one implementation for every endpoint (spec "List envelopes"):
 * - page numbers (people, invoices, API keys, rules, file versions, webhooks): `page` from 1, `limit` 1..100
 *   (default 20); answer `{data, meta: {page, limit, total, totalPages}}`;
 * - cursors (files, comments, notifications, audit log): `cursor` and `limit`; answer
 *   `{data, meta: {nextCursor, hasMore}}`, newest first by (created_at, id), a keyset that stays stable
 *   while rows are inserted. A cursor is AES-256-GCM sealed: opaque, tamper-evident, bound to its list and
 *   to the caller's company (anything else is refused with 400).
 * A query parameter out of range or unknown answers 400 through the route's query schema.
 */
import type { Knex } from 'knex';
import { raw, type QueryBuilder, type Model } from 'objection';
import { BadRequestError } from '../common/errors';
import { deriveKey, openBox, sealBox } from '../common/secrets';
import type { JsonSchema } from './routing';
import { MAX_INT4 } from './validation';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export const limitSchema = {
  type: 'integer',
  minimum: 1,
  maximum: MAX_LIMIT,
  default: DEFAULT_LIMIT,
  description: 'items per page, 1 to 100',
} as const;

export const pageQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    page: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_INT4,
      default: 1,
      description: `page number, from 1 (at most ${MAX_INT4})`,
    },
    limit: limitSchema,
  },
} as const;

export const cursorQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cursor: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      description: 'meta.nextCursor of the previous page; absent for the first page',
    },
    limit: limitSchema,
  },
} as const;

export const pageMetaSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['page', 'limit', 'total', 'totalPages'],
  properties: {
    page: { type: 'integer', minimum: 1 },
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT },
    total: { type: 'integer', minimum: 0 },
    totalPages: { type: 'integer', minimum: 0 },
  },
} as const;

export const cursorMetaSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['nextCursor', 'hasMore'],
  properties: {
    nextCursor: {
      type: ['string', 'null'],
      description: 'send as `cursor` for the next page; null on the last page',
    },
    hasMore: { type: 'boolean' },
  },
} as const;

export function pageEnvelope<const S extends JsonSchema>(item: S) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['data', 'meta'],
    properties: { data: { type: 'array', items: item }, meta: pageMetaSchema },
  } as const;
}

export function cursorEnvelope<const S extends JsonSchema>(item: S) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['data', 'meta'],
    properties: { data: { type: 'array', items: item }, meta: cursorMetaSchema },
  } as const;
}

export interface PageMeta {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}
export interface CursorMeta {
  nextCursor: string | null;
  hasMore: boolean;
}
export interface PageList<T> {
  data: T[];
  meta: PageMeta;
}
export interface CursorList<T> {
  data: T[];
  meta: CursorMeta;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyQuery = QueryBuilder<Model, any> | Knex.QueryBuilder;

function isObjection(q: AnyQuery): q is QueryBuilder<Model, Model[]> {
  return typeof (q as QueryBuilder<Model, Model[]>).modelClass === 'function';
}

/** The objection model's table, or undefined for a knex query (on one table). */
function tableOf(q: AnyQuery): string | undefined {
  return isObjection(q) ? q.modelClass().tableName : undefined;
}

/** `table.column` for an objection query, the bare column for a knex query on one table. */
function columnOf(q: AnyQuery, column: string): string {
  const t = tableOf(q);
  return t ? `${t}.${column}` : column;
}

/** The validated query of a page-number list. */
export interface PageQuery {
  page: number;
  limit: number;
}

/** The validated query of a cursor list. */
export interface CursorQuery {
  cursor?: string;
  limit: number;
}

/**
 * A page of `query` (already scoped to the caller's company, with its filters), newest first by
 * (created_at, id) after any order the query has. Runs the count and the page in parallel; `present` maps
 * each row to its output fields.
 */
export async function pageList<T = unknown, R = unknown>(
  query: AnyQuery,
  input: { page?: number; limit?: number },
  present?: (row: R) => T,
): Promise<PageList<T>> {
  const page = input.page ?? 1;
  const limit = input.limit ?? DEFAULT_LIMIT;
  const countQuery = isObjection(query)
    ? query.clone().resultSize()
    : ((query as Knex.QueryBuilder)
        .clone()
        .clearSelect()
        .clearOrder()
        .count({ total: '*' })
        .first()
        .then((row: { total?: string | number } | undefined) => Number(row?.total ?? 0)) as Promise<number>);
  const rowsQuery = (query.clone() as Knex.QueryBuilder)
    .orderBy([
      { column: columnOf(query, 'createdAt'), order: 'desc' },
      { column: columnOf(query, 'id'), order: 'desc' },
    ])
    .limit(limit)
    .offset((page - 1) * limit);
  const [total, rows] = await Promise.all([countQuery, rowsQuery as unknown as Promise<R[]>]);
  const data = present ? rows.map(present) : (rows as unknown as T[]);
  return { data, meta: { page, limit, total, totalPages: Math.ceil(total / limit) } };
}

interface CursorPosition {
  /** created_at with microseconds, ISO 8601 UTC */
  t: string;
  i: string;
}

interface CursorPayload extends CursorPosition {
  l: string;
  c: string;
}

export class Cursors {
  private readonly key: Buffer;
  constructor(secretKey: string) {
    this.key = deriveKey(secretKey, 'cursor');
  }

  seal(list: string, companyId: string, position: CursorPosition): string {
    const payload: CursorPayload = { l: list, c: companyId, t: position.t, i: position.i };
    return sealBox(this.key, JSON.stringify(payload)).toString('base64url');
  }

  /** The position in `list` for `companyId`, or 400 for anything forged, altered or not the caller's. */
  open(list: string, companyId: string, cursor: string): CursorPosition {
    const invalid = () => new BadRequestError('query.cursor is not a valid cursor for this list');
    const raw = Buffer.from(cursor, 'base64url');
    if (raw.length < 12 + 16 + 2 || raw.toString('base64url') !== cursor) throw invalid();
    let payload: CursorPayload;
    try {
      payload = JSON.parse(openBox(this.key, raw)) as CursorPayload;
    } catch {
      throw invalid();
    }
    if (payload.l !== list || payload.c !== companyId) throw invalid();
    return { t: payload.t, i: payload.i };
  }
}

const cursorsBySecret = new Map<string, Cursors>();
function cursorsFor(secretKey: string): Cursors {
  let c = cursorsBySecret.get(secretKey);
  if (!c) {
    c = new Cursors(secretKey);
    cursorsBySecret.set(secretKey, c);
  }
  return c;
}

export interface CursorListOptions<R = unknown, T = unknown> {
  /** maps each row to its output fields */
  present?: (row: R) => T;
  /** names the list inside the cursor, so a cursor of one list is refused by another */
  list: string;
  /** the caller's company (ctx.state.auth.companyId): a cursor works only for it */
  companyId: string;
  /** config.secretKey */
  secretKey: string;
  /** newest first (default) or oldest first (comments) by (created_at, id) */
  order?: 'desc' | 'asc';
}

/**
 * A page of `query` (scoped to the caller's company, with its filters) after the cursor's position, newest
 * first by (created_at desc, id desc) — or oldest first with `order: 'asc'`. Selects `<table>.*`; present the rows field by field afterwards.
 */
export async function cursorList<T = unknown, R = unknown>(
  query: AnyQuery,
  input: { cursor?: string; limit?: number },
  options: CursorListOptions<R, T>,
): Promise<CursorList<T>> {
  const limit = input.limit ?? DEFAULT_LIMIT;
  const cursors = cursorsFor(options.secretKey);
  const after = input.cursor ? cursors.open(options.list, options.companyId, input.cursor) : undefined;
  const created = columnOf(query, 'createdAt');
  const id = columnOf(query, 'id');
  const all = tableOf(query);
  // created_at keeps microseconds, more than a JS Date holds: the cursor carries the database's own text
  const positionSql = `to_char(?? at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "cursor_at"`;
  const position: unknown = isObjection(query)
    ? raw(positionSql, [created])
    : (query as Knex.QueryBuilder).client.raw(positionSql, [created]);
  const q = query.clone() as Knex.QueryBuilder;
  q.select(all ? `${all}.*` : '*').select(position as Knex.Raw);
  const order = options.order ?? 'desc';
  const beyond = order === 'desc' ? '<' : '>';
  if (after) q.whereRaw(`(??, ??) ${beyond} (?::timestamptz, ?)`, [created, id, after.t, after.i]);
  q.orderBy([
    { column: created, order },
    { column: id, order },
  ]).limit(limit + 1);
  const rows = (await q) as unknown as Array<Record<string, unknown>>;
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor =
    hasMore && last
      ? cursors.seal(options.list, options.companyId, { t: String(last.cursorAt), i: String(last.id) })
      : null;
  for (const row of page) delete row.cursorAt;
  const data = options.present ? (page as R[]).map(options.present) : (page as T[]);
  return { data, meta: { nextCursor, hasMore } };
}
