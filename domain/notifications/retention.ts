import type { Knex } from 'knex';
import { NOTIFICATION_RETENTION_DAYS } from './kinds';

/**
 * Removes notifications older than 90 days, 1000 at a time, in every company (the caller acts as the system
 * task `notification-retention`); `progress` is told the running total (an activity heartbeats with it).
 */
export async function deleteExpiredNotifications(
  knex: Knex,
  progress: (deleted: number) => void = () => undefined,
): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < 10_000; batch++) {
    const result = await knex.raw<{ rowCount: number }>(
      `delete from notifications where id in (
         select id from notifications where created_at < now() - make_interval(days => ?) limit 1000)`,
      [NOTIFICATION_RETENTION_DAYS],
    );
    deleted += result.rowCount;
    progress(deleted);
    if (result.rowCount < 1000) break;
  }
  return deleted;
}
