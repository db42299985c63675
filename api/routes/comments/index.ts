/**
 * Comments on files (issue 15). Reading takes files:read (a key or a session); writing is for sessions only:
 * keys can never write comments (rule 12), so those routes name no key scope and refuse every key with 403.
 * A comment follows its file's visibility: 404 for a file or comment the caller cannot see.
 */
import {
  addComment,
  commentsOf,
  deleteComment,
  editComment,
  getComment,
} from '../../../domain/comments/comments';
import { presentComment } from '../../../domain/comments/present';
import { principalOf } from '../../middlewares/authenticate';
import { cursorEnvelope, cursorList, cursorQuerySchema, type CursorQuery } from '../../lists';
import { route } from '../../routing';
import { NOT_BLANK, uuidParams } from '../../schemas';
import { inUnitOfWork } from '../../unitOfWork';
import { MAX_INT4 } from '../../validation';

const TAG = 'Comments';
const read = { roles: ['admin', 'employee'], keyScope: 'files:read' } as const;
// no keyScope: every API key gets 403 (rule 12)
const sessionOnly = { roles: ['admin', 'employee'] } as const;

const MENTIONS =
  'Mention a person of the company as `@<personId>` (their id) or `@<email>` (their address): each person mentioned who can see the file is notified once (`comment.mention`); a mention of anyone else notifies nobody, and the answer does not tell.';

export const commentSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'fileId', 'version', 'authorId', 'body', 'editedAt', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    fileId: { type: 'string', format: 'uuid' },
    version: { type: ['integer', 'null'], description: 'the version commented on; null: the file' },
    authorId: {
      type: ['string', 'null'],
      format: 'uuid',
      description: 'the person who wrote it; null once they were removed from the company',
    },
    body: { type: 'string' },
    editedAt: { type: ['string', 'null'], format: 'date-time' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

const bodyText = {
  type: 'string',
  minLength: 1,
  maxLength: 5000,
  pattern: NOT_BLANK,
  description: `1 to 5000 characters. ${MENTIONS}`,
} as const;

const notFound = { description: 'the file or comment does not exist or the caller cannot see it' };

export const commentRoutes = [
  route({
    method: 'post',
    path: '/files/:id/comments',
    summary:
      'Comment on a file (session only: API keys get 403); mentions notify people who can see the file',
    tag: TAG,
    access: sessionOnly,
    idempotent: true,
    params: uuidParams,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['body'],
      properties: {
        body: bodyText,
        version: { type: 'integer', minimum: 1, maximum: MAX_INT4, description: 'the version commented on' },
      },
    },
    responses: {
      201: { description: 'the comment', schema: commentSchema },
      403: { description: 'an API key (keys never write comments)' },
      404: notFound,
    },
    handler: async (
      ctx,
      { params, body }: { params: { id: string }; body: { body: string; version?: number } },
    ) => {
      const comment = await inUnitOfWork(ctx, (uow) => addComment(principalOf(ctx), uow, params.id, body));
      return { status: 201, headers: { Location: `/comments/${comment.id}` }, body: presentComment(comment) };
    },
  }),
  route({
    method: 'get',
    path: '/files/:id/comments',
    summary: 'The comments of a file, oldest first (cursor list; files:read)',
    tag: TAG,
    access: read,
    params: uuidParams,
    query: cursorQuerySchema,
    responses: {
      200: { description: 'a page of comments', schema: cursorEnvelope(commentSchema) },
      404: notFound,
    },
    handler: async (ctx, { params, query }: { params: { id: string }; query: CursorQuery }) => {
      const auth = principalOf(ctx);
      const { comments } = await commentsOf(auth, ctx.deps.knex, params.id);
      return {
        body: await cursorList(comments, query, {
          list: `comments:${params.id}`,
          companyId: auth.companyId,
          secretKey: ctx.deps.config.secretKey,
          present: presentComment,
          order: 'asc',
        }),
      };
    },
  }),
  route({
    method: 'get',
    path: '/comments/:id',
    summary: 'One comment (files:read)',
    tag: TAG,
    access: read,
    params: uuidParams,
    responses: { 200: { description: 'the comment', schema: commentSchema }, 404: notFound },
    handler: async (ctx, { params }: { params: { id: string } }) => ({
      body: presentComment(await getComment(principalOf(ctx), ctx.deps.knex, params.id)),
    }),
  }),
  route({
    method: 'patch',
    path: '/comments/:id',
    summary: "Edit a comment's body (its author only, session only); people newly mentioned are notified",
    tag: TAG,
    access: sessionOnly,
    params: uuidParams,
    body: { type: 'object', additionalProperties: false, required: ['body'], properties: { body: bodyText } },
    responses: {
      200: { description: 'the comment', schema: commentSchema },
      403: { description: 'an API key, or the caller sees the comment but did not write it' },
      404: notFound,
    },
    handler: async (ctx, { params, body }: { params: { id: string }; body: { body: string } }) => {
      const comment = await inUnitOfWork(ctx, (uow) =>
        editComment(principalOf(ctx), uow, params.id, body.body),
      );
      return { body: presentComment(comment) };
    },
  }),
  route({
    method: 'delete',
    path: '/comments/:id',
    summary: 'Delete a comment (its author, or an admin of the company; session only)',
    tag: TAG,
    access: sessionOnly,
    params: uuidParams,
    responses: {
      204: { description: 'deleted' },
      403: {
        description: 'an API key, or the caller sees the comment but is neither its author nor an admin',
      },
      404: notFound,
    },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      await inUnitOfWork(ctx, (uow) => deleteComment(principalOf(ctx), uow, params.id));
      return { status: 204 };
    },
  }),
];
