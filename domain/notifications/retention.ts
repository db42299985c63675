import type { Knex } from 'knex';
import { deleteInBatches, deleteOlderThan } from '../../db/retention';
import { NOTIFICATION_RETENTION_DAYS } from './kinds';

/**
 * Removes notifications older than 90 days, 1000 at a time, in every company (the caller acts as the system
 * task `notification-retention`); `progress` is told the running total (an activity heartbeats with it).
 */
export function deleteExpiredNotifications(
  knex: Knex,
  progress: (deleted: number) => void = () => undefined,
): Promise<number> {
  return deleteInBatches(deleteOlderThan(knex, 'notifications', NOTIFICATION_RETENTION_DAYS), progress);
}
