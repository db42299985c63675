import type { Notification } from '../../db/models';

/** The fields a notification shows, one by one. */
export function presentNotification(n: Notification) {
  return {
    id: n.id,
    kind: n.kind,
    resource: { type: n.resourceType, id: n.resourceId },
    data: n.data ?? {},
    read: n.readAt !== null && n.readAt !== undefined,
    readAt: n.readAt ? new Date(n.readAt).toISOString() : null,
    createdAt: new Date(n.createdAt).toISOString(),
  };
}
