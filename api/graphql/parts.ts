/**
 * Where a capability adds itself to the GraphQL schema (comments, notifications, billing, audit log as they
 * land): a `SchemaPart` with its fields on Query, File, Version or Person (thunks, read when the schema is
 * built) and any extra types. Its resolvers read through loaders made with `ctx.loader(name, make)` that
 * call the capability's domain functions (tenant scope and visibility included); admin-only fields are
 * wrapped in `adminOnly` (schema.ts). Then reprint api/graphql/schema.graphql (`npm run graphql:schema`).
 *
 * Example (comments on a file):
 *   { fields: { file: () => ({ comments: { type: nn(CommentConnection), args: pageArgs,
 *       extensions: connectionComplexity, resolve: (f, args, c) => … commentsOf(c.actor, c.db, f.id) … } }) } }
 */
import type { GraphQLFieldConfigMap, GraphQLNamedType } from 'graphql';
import type { GraphQLContext } from './context';
import { auditPart } from './parts/audit';
import { billingPart } from './parts/billing';
import { commentsPart } from './parts/comments';
import { notificationsPart } from './parts/notifications';

export interface SchemaPart {
  fields?: Partial<
    Record<'query' | 'file' | 'version' | 'person', () => GraphQLFieldConfigMap<any, GraphQLContext>> // eslint-disable-line @typescript-eslint/no-explicit-any
  >;
  types?: GraphQLNamedType[];
}

export const SCHEMA_PARTS: SchemaPart[] = [billingPart, commentsPart, notificationsPart, auditPart];
