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
import { BadRequestError, ForbiddenError } from '../../common/errors';
import type { KeysetPosition } from '../../domain/files/batch';
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

/** Fields visible to admins only (e.g. billing and the audit log, when they land): others get a FORBIDDEN error. */
export function adminOnly<S>(field: Field<S>): Field<S> {
  const resolve = field.resolve;
  return {
    ...field,
    description: `${field.description ?? ''} (admins only)`.trim(),
    resolve: (source, args, ctx: GraphQLContext, info) => {
      if (ctx.actor.role !== 'admin') throw new ForbiddenError('your role does not allow this');
      return resolve ? resolve(source, args, ctx, info) : (source as Record<string, unknown>)[info.fieldName];
    },
  };
}

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

/** The complexity of a connection field: its page size times what each node asks for. */
export const connectionComplexity = {
  complexity: ({ args, childComplexity }: { args: PageArgs; childComplexity: number }) =>
    1 + (args.first ?? DEFAULT_LIMIT) * childComplexity,
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
