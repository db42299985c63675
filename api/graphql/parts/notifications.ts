/**
 * Notifications in the GraphQL schema (issue 15 through issue 18's `SchemaPart`): the caller's own, newest
 * first (`notifications`, optionally unread ones only) and the unread count — the same domain queries and
 * presenter as GET /notifications and GET /notifications/unread-count, with the same cursors (bound to the
 * person and to `unread`). Another person's notifications are never in reach: every read starts from the
 * caller's company and person (`notificationsOf`).
 */
import { GraphQLBoolean, GraphQLID, GraphQLObjectType } from 'graphql';
import { notificationsOf, unreadCount } from '../../../domain/notifications/notifications';
import { presentNotification } from '../../../domain/notifications/present';
import type { GraphQLContext } from '../context';
import {
  connectionComplexity,
  connectionType,
  JSONScalar,
  keysetRows,
  nn,
  pageArgs,
  readPage,
  reqInt,
  reqStr,
  ResourceRefType,
  str,
  toPage,
  type PageArgs,
} from '../kit';
import type { SchemaPart } from '../parts';

const NotificationType = new GraphQLObjectType<ReturnType<typeof presentNotification>>({
  name: 'Notification',
  description: 'One of the caller’s notifications (kinds: README "Notifications")',
  fields: {
    id: { type: nn(GraphQLID) },
    kind: reqStr,
    resource: { type: nn(ResourceRefType) },
    data: { type: nn(JSONScalar), description: 'ids, numbers and codes of the cause (never cell values)' },
    read: { type: nn(GraphQLBoolean) },
    readAt: str,
    createdAt: reqStr,
  },
});

const NotificationConnection = connectionType('Notification', NotificationType);

export const notificationsPart: SchemaPart = {
  fields: {
    query: () => ({
      notifications: {
        type: nn(NotificationConnection),
        description:
          'the caller’s own notifications, newest first (GET /notifications; `unread: true` for unread ones)',
        args: { ...pageArgs, unread: { type: GraphQLBoolean, description: 'true: only unread ones' } },
        extensions: connectionComplexity,
        resolve: async (_s: unknown, args: PageArgs & { unread?: boolean | null }, c: GraphQLContext) => {
          const unread = args.unread === true;
          const list = `notifications:${c.actor.personId}:${unread ? 'unread' : 'all'}`;
          const page = readPage(c, list, args);
          const rows = await keysetRows(notificationsOf(c.actor, c.db, { unread }), page);
          const paged = toPage(c, list, page.limit, rows);
          return { ...paged, nodes: paged.nodes.map(presentNotification) };
        },
      },
      unreadNotificationCount: {
        ...reqInt,
        description: 'how many of the caller’s notifications are unread (GET /notifications/unread-count)',
        resolve: (_s: unknown, _a: unknown, c: GraphQLContext) => unreadCount(c.actor, c.db),
      },
    }),
  },
  types: [],
};
