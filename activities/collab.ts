import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import type { Logger } from '../common/logger';
import { deleteExpiredAuditEntries } from '../domain/audit/retention';
import { deleteExpiredNotifications } from '../domain/notifications/retention';

/** Activities of the retention Schedules of notifications and audit entries (issue 15). */
export function createCollabActivities(deps: { knex: Knex; logger: Logger; auditRetentionDays: number }) {
  const heartbeat = (deleted: number) => Context.current().heartbeat({ deleted });
  return {
    /** Removes notifications older than 90 days (run by its retention Schedule). */
    async deleteExpiredNotifications(): Promise<{ deleted: number }> {
      const deleted = await deleteExpiredNotifications(deps.knex, heartbeat);
      if (deleted > 0) deps.logger.info({ deleted }, 'expired notifications removed');
      return { deleted };
    },
    /** Removes audit entries older than AUDIT_RETENTION_DAYS (run by its retention Schedule). */
    async deleteExpiredAuditEntries(): Promise<{ deleted: number }> {
      const deleted = await deleteExpiredAuditEntries(deps.knex, deps.auditRetentionDays, heartbeat);
      if (deleted > 0) deps.logger.info({ deleted }, 'expired audit entries removed');
      return { deleted };
    },
  };
}

export type CollabActivities = ReturnType<typeof createCollabActivities>;
