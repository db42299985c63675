/**
 * Reading one's own notifications and marking them read. Every query starts from the actor's company and
 * person (an API key reads its owner's): another person's notification is "not found".
 */
import type { Knex } from 'knex';
import { NotFoundError } from '../../common/errors';
import { Notification } from '../../db/models';
import type { UnitOfWork } from '../../db/transaction';
import { auditActor, recordAudit } from '../audit/record';

/** Who acts: a person, directly or through an API key. */
export interface NotificationActor {
  companyId: string;
  personId: string;
  apiKeyId?: string | null;
}

type Db = Knex | Knex.Transaction;

/** The actor's notifications (a query the adapter pages, newest first); only unread ones when asked. */
export function notificationsOf(actor: NotificationActor, db: Db, options: { unread?: boolean } = {}) {
  const query = Notification.scoped(actor.companyId, db).where('notifications.personId', actor.personId);
  if (options.unread) void query.whereNull('notifications.readAt');
  return query;
}

/** How many of the actor's notifications are unread. */
export async function unreadCount(actor: NotificationActor, db: Db): Promise<number> {
  const row = (await notificationsOf(actor, db, { unread: true }).count({ n: '*' }).first()) as unknown as
    { n: string | number } | undefined;
  return Number(row?.n ?? 0);
}

/** Marks one of the actor's notifications read (404 for anyone else's); marking it again changes nothing. */
export async function markRead(actor: NotificationActor, uow: UnitOfWork, id: string): Promise<Notification> {
  const found = await notificationsOf(actor, uow.trx).findById(id).forUpdate();
  if (!found) throw new NotFoundError('notification not found');
  if (found.readAt) return found;
  const updated = await found.$query(uow.trx).patchAndFetch({ readAt: new Date() });
  await recordAudit(uow.trx, {
    ...auditActor(actor, uow.correlationId),
    action: 'notification.read',
    resourceType: 'notification',
    resourceId: id,
    details: { kind: found.kind },
  });
  return updated;
}

/** Marks every unread notification of the actor read; answers how many changed. */
export async function markAllRead(actor: NotificationActor, uow: UnitOfWork): Promise<number> {
  const count = await notificationsOf(actor, uow.trx, { unread: true }).patch({ readAt: new Date() });
  await recordAudit(uow.trx, {
    ...auditActor(actor, uow.correlationId),
    action: 'notification.read_all',
    resourceType: 'notification',
    resourceId: null,
    details: { count },
  });
  return count;
}
