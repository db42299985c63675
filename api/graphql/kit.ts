/**
 * The GraphQL adapter's building blocks (issue 18): type shorthands, the JSON scalar, `adminOnly`, connections
 * with REST-format cursors and their complexity. Shared by schema.ts and the capability parts (parts/*.ts),
 * which import this module and never schema.ts at load time (its types are read inside field thunks).
 */
import {
  GraphQLBoolean,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLString,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  type GraphQLOutputType,
} from 'graphql';
import { raw, type Model, type QueryBuilder } from 'objection';
import { BadRequestError, ForbiddenError } from '../../common/errors';
import type { KeysetPosition, Positioned } from '../../domain/files/batch';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../lists';
import type { GraphQLContext } from './context';

export type Field<S = unknown> = GraphQLFieldConfig<S, GraphQLContext, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
export type Fields<S = unknown> = GraphQLFieldConfigMap<S, GraphQLContext>;

export const nn = <T extends GraphQLOutputType>(t: T) => new GraphQLNonNull(t);
export const list = <T extends GraphQLOutputType>(t: T) => nn(new GraphQLList(nn(t)));
export const str = { type: GraphQLString };
export const reqStr = { type: nn(GraphQLString) };
export const int = { type: GraphQLInt };
export const reqInt = { type: nn(GraphQLInt) };

/** Any JSON value (profiles, summaries, plan limits): shapes documented in the OpenAPI document's REST answers. */
export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value; the same shape as the REST answer’s field of the same name.',
  serialize: (v) => v,
});

/**
 * Fields visible to admins only (billing, the audit log): others get a FORBIDDEN error for the field, and null in
 * its place — the field is nullable whatever type it is given, so a refusal does not void the rest of the answer
 * (GraphQL nulls the nearest nullable parent of a failed non-null field: here the whole `data`).
 */
export function adminOnly<S>(field: Field<S>): Field<S> {
  const resolve = field.resolve;
  return {
    ...field,
    type: field.type instanceof GraphQLNonNull ? (field.type.ofType as GraphQLOutputType) : field.type,
    description: `${field.description ?? ''} (admins only)`.trim(),
    resolve: (source, args, ctx: GraphQLContext, info) => {
      if (ctx.actor.role !== 'admin') throw new ForbiddenError('your role does not allow this');
      return resolve ? resolve(source, args, ctx, info) : (source as Record<string, unknown>)[info.fieldName];
    },
  };
}

/** What a notification or audit entry is about (`resource` in their REST answers). */
export const ResourceRefType = new GraphQLObjectType({
  name: 'ResourceRef',
  description: 'What a notification or audit entry is about: a type (file, comment, …) and its id',
  fields: { type: reqStr, id: str },
});

// ---------------------------------------------------------------------------------------------- connections

export const PageInfo = new GraphQLObjectType({
  name: 'PageInfo',
  fields: {
    hasNextPage: { type: nn(GraphQLBoolean) },
    endCursor: {
      type: GraphQLString,
      description:
        'pass as `after` for the next page; null on the last page (the same format as REST cursors)',
    },
  },
});

/** A page as resolvers hand it to a connection type. */
export interface Page<T> {
  nodes: T[];
  hasNextPage: boolean;
  endCursor: string | null;
}

export interface PageArgs {
  first?: number | null;
  after?: string | null;
}

export const pageArgs = {
  first: { type: GraphQLInt, description: `page size, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})` },
  after: { type: GraphQLString, description: 'pageInfo.endCursor of the previous page' },
};

export function connectionType(name: string, node: GraphQLObjectType): GraphQLObjectType {
  return new GraphQLObjectType({
    name: `${name}Connection`,
    fields: {
      nodes: { type: list(node) },
      pageInfo: { type: nn(PageInfo), resolve: (page: Page<unknown>) => page },
    },
  });
}

/**
 * The complexity of a connection field: its page size times what each node asks for. The size is taken within
 * 1..MAX_LIMIT before it is checked (readPage refuses others when the field runs): a negative `first` must not
 * count negative and cancel the cost of its siblings, which run before the refused field's error ends the query.
 */
export const connectionComplexity = {
  complexity: ({ args, childComplexity }: { args: PageArgs; childComplexity: number }) => {
    const first = args.first ?? DEFAULT_LIMIT;
    const size = Number.isFinite(first) ? Math.min(MAX_LIMIT, Math.max(1, Math.trunc(first))) : MAX_LIMIT;
    return 1 + size * childComplexity;
  },
};

/** The validated page size and position of a connection (`list` names the list inside the cursor). */
export function readPage(
  ctx: GraphQLContext,
  list: string,
  args: PageArgs,
): { limit: number; after?: KeysetPosition } {
  const limit = args.first ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new BadRequestError(`first must be from 1 to ${MAX_LIMIT}`);
  if (!args.after) return { limit };
  try {
    return { limit, after: ctx.cursors.open(list, ctx.actor.companyId, args.after) };
  } catch {
    throw new BadRequestError('after is not a valid cursor for this list');
  }
}

/** A page from `limit` + 1 positioned rows. */
export function toPage<T extends { id: string; cursorAt: string }>(
  ctx: GraphQLContext,
  list: string,
  limit: number,
  rows: readonly T[],
): Page<T> {
  const hasNextPage = rows.length > limit;
  const nodes = rows.slice(0, limit);
  const last = nodes[nodes.length - 1];
  return {
    nodes,
    hasNextPage,
    endCursor:
      hasNextPage && last
        ? ctx.cursors.seal(list, ctx.actor.companyId, { t: last.cursorAt, i: last.id })
        : null,
  };
}

/**
 * `limit` + 1 rows of a domain query (already tenant-scoped and filtered, e.g. `notificationsOf`) after
 * `after`, by (created_at, id) — newest first, or oldest first with `order: 'asc'` — each with its keyset
 * position (`cursorAt`, the database's own text with microseconds, as REST cursors carry it).
 */
export function keysetRows<M extends Model>(
  query: QueryBuilder<M, M[]>,
  page: { limit: number; after?: KeysetPosition },
  order: 'asc' | 'desc' = 'desc',
): Promise<Array<Positioned<M>>> {
  const table = query.modelClass().tableName;
  const created = `${table}.createdAt`;
  const id = `${table}.id`;
  const q = query
    .clone()
    .select(
      `${table}.*`,
      raw(`to_char(?? at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at`, [created]),
    );
  if (page.after)
    void q.whereRaw(`(??, ??) ${order === 'desc' ? '<' : '>'} (?::timestamptz, ?)`, [
      created,
      id,
      page.after.t,
      page.after.i,
    ]);
  return q
    .orderBy([
      { column: created, order },
      { column: id, order },
    ])
    .limit(page.limit + 1) as unknown as Promise<Array<Positioned<M>>>;
}

// ------------------------------------------------------------------------------------- the schema's types

/**
 * The schema's own types (PersonType, FileType, …) for a part's field thunks: schema.ts imports the parts, so
 * a part reads them only when the schema is built (inside a thunk), never at load time.
 */
export function schemaTypes(): typeof import('./schema') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./schema') as typeof import('./schema');
}

/** An ISO 8601 UTC text of a timestamp column (null stays null). */
export const isoTime = (d: Date | string | null | undefined): string | null =>
  d ? new Date(d).toISOString() : null;
