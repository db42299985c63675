/**
 * One's own notifications (issue 15): any session, or a key with notifications:read (its owner's). Another
 * person's notification is 404. Kinds: domain/notifications/kinds.ts (README "Notifications").
 */
import { NOTIFICATION_KIND_NAMES } from '../../../domain/notifications/kinds';
import {
  markAllRead,
  markRead,
  notificationsOf,
  unreadCount,
} from '../../../domain/notifications/notifications';
import { presentNotification } from '../../../domain/notifications/present';
import { principalOf } from '../../middlewares/authenticate';
import { cursorEnvelope, cursorList, cursorQuerySchema, type CursorQuery } from '../../lists';
import { route } from '../../routing';
import { uuidParams } from '../../schemas';
import { inUnitOfWork } from '../../unitOfWork';

const TAG = 'Notifications';
const access = { roles: ['admin', 'employee'], keyScope: 'notifications:read' } as const;

export const notificationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'kind', 'resource', 'data', 'read', 'readAt', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    kind: { enum: NOTIFICATION_KIND_NAMES, description: 'what happened (README "Notifications")' },
    resource: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id'],
      properties: { type: { type: 'string' }, id: { type: ['string', 'null'] } },
    },
    data: {
      type: 'object',
      description: 'ids, numbers and codes of the cause (never cell values)',
      additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
    },
    read: { type: 'boolean' },
    readAt: { type: ['string', 'null'], format: 'date-time' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

const listQuery = {
  ...cursorQuerySchema,
  properties: {
    ...cursorQuerySchema.properties,
    unread: { type: 'boolean', description: 'true: only unread notifications' },
  },
} as const;

export const notificationRoutes = [
  route({
    method: 'get',
    path: '/notifications',
    summary: "The caller's own notifications, newest first (cursor list; `unread=true` for unread ones)",
    tag: TAG,
    access,
    query: listQuery,
    responses: {
      200: { description: 'a page of notifications', schema: cursorEnvelope(notificationSchema) },
    },
    handler: async (ctx, { query }: { query: CursorQuery & { unread?: boolean } }) => {
      const auth = principalOf(ctx);
      return {
        body: await cursorList(notificationsOf(auth, ctx.deps.knex, { unread: query.unread }), query, {
          list: `notifications:${auth.personId}:${query.unread ? 'unread' : 'all'}`,
          companyId: auth.companyId,
          secretKey: ctx.deps.config.secretKey,
          present: presentNotification,
        }),
      };
    },
  }),
  route({
    method: 'get',
    path: '/notifications/unread-count',
    summary: "How many of the caller's notifications are unread",
    tag: TAG,
    access,
    responses: {
      200: {
        description: 'the count',
        schema: {
          type: 'object',
          additionalProperties: false,
          required: ['unread'],
          properties: { unread: { type: 'integer', minimum: 0 } },
        },
      },
    },
    handler: async (ctx) => ({ body: { unread: await unreadCount(principalOf(ctx), ctx.deps.knex) } }),
  }),
  route({
    method: 'post',
    path: '/notifications/:id/read',
    summary: 'Mark one of the caller’s notifications read (again: no change); audited',
    tag: TAG,
    access,
    params: uuidParams,
    responses: {
      200: { description: 'the notification', schema: notificationSchema },
      404: { description: "no such notification, or another person's" },
    },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      const n = await inUnitOfWork(ctx, (uow) => markRead(principalOf(ctx), uow, params.id));
      return { body: presentNotification(n) };
    },
  }),
  route({
    method: 'post',
    path: '/notifications/read-all',
    summary: 'Mark every unread notification of the caller read; audited',
    tag: TAG,
    access,
    responses: {
      200: {
        description: 'how many were marked',
        schema: {
          type: 'object',
          additionalProperties: false,
          required: ['marked'],
          properties: { marked: { type: 'integer', minimum: 0 } },
        },
      },
    },
    handler: async (ctx) => {
      const marked = await inUnitOfWork(ctx, (uow) => markAllRead(principalOf(ctx), uow));
      return { body: { marked } };
    },
  }),
];
