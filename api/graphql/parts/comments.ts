/**
 * Comments in the GraphQL schema (issue 15 through issue 18's `SchemaPart`): `File.comments`, a connection
 * oldest first as GET /files/{id}/comments, with the same cursors (a REST `meta.nextCursor` works as `after`
 * and the other way round). All the files of a request are read in one query per page size and position
 * (`commentsOfFiles`, a keyset page per file) through `visibleComments`: the comments of a file the caller
 * cannot see are never returned, whatever the path. Authors go through the person loader, so employees see
 * only the name and role of others (PersonType).
 */
import DataLoader from 'dataloader';
import { GraphQLID, GraphQLObjectType } from 'graphql';
import type { Comment, File } from '../../../db/models';
import { commentsOfFiles } from '../../../domain/comments/batch';
import type { KeysetPosition, Positioned } from '../../../domain/files/batch';
import { loaders, type GraphQLContext } from '../context';
import {
  connectionComplexity,
  connectionType,
  int,
  isoTime,
  nn,
  pageArgs,
  readPage,
  reqStr,
  schemaTypes,
  str,
  toPage,
  type PageArgs,
} from '../kit';
import type { SchemaPart } from '../parts';

const CommentType: GraphQLObjectType = new GraphQLObjectType<Comment, GraphQLContext>({
  name: 'Comment',
  description: 'A comment on a file (GET /comments/{id}); it follows its file’s visibility',
  fields: () => ({
    id: { type: nn(GraphQLID) },
    file: {
      type: schemaTypes().FileType,
      resolve: (x, _a, c) => loaders.file(c).load(x.fileId),
    },
    version: { ...int, description: 'the version commented on; null: the file as a whole' },
    body: reqStr,
    author: {
      type: schemaTypes().PersonType,
      description: 'who wrote it; null once they were removed from the company',
      resolve: (x, _a, c) => (x.authorPersonId ? loaders.person(c).load(x.authorPersonId) : null),
    },
    editedAt: {
      ...str,
      description: 'when its body last changed; null if never',
      resolve: (x) => isoTime(x.editedAt),
    },
    createdAt: { ...reqStr, resolve: (x) => isoTime(x.createdAt) },
    updatedAt: { ...reqStr, resolve: (x) => isoTime(x.updatedAt ?? x.createdAt) },
  }),
});

const CommentConnection = connectionType('Comment', CommentType);

/** A page of comments per file, for one page size and position (all files of a request in one query). */
const commentsPage = (c: GraphQLContext, limit: number, after: KeysetPosition | undefined) =>
  c.loader(
    `commentsPage:${limit}:${after ? `${after.t}/${after.i}` : ''}`,
    () =>
      new DataLoader<string, Array<Positioned<Comment>>>(async (fileIds) => {
        const pages = await commentsOfFiles(c.actor, c.db, fileIds, { limit, after });
        return fileIds.map((id) => pages.get(id) ?? []);
      }),
  );

export const commentsPart: SchemaPart = {
  fields: {
    file: () => ({
      comments: {
        type: nn(CommentConnection),
        description:
          'oldest first (GET /files/{id}/comments; cursors interchangeable with it, each bound to its file)',
        args: pageArgs,
        extensions: connectionComplexity,
        resolve: async (f: File, args: PageArgs, c: GraphQLContext) => {
          const list = `comments:${f.id}`;
          const page = readPage(c, list, args);
          const rows = await commentsPage(c, page.limit, page.after).load(f.id);
          return toPage(c, list, page.limit, rows);
        },
      },
    }),
  },
  types: [],
};
