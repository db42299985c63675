import type { Knex } from 'knex';
import { deleteInBatches } from '../../db/retention';

/**
 * Removes audit entries older than `days` (AUDIT_RETENTION_DAYS, default 365), 1000 at a time, through
 * `purge_audit_log` — the only way to delete an entry: the application roles may not delete from audit_log
 * (20261123001020_audit_log). The caller acts as the system task `audit-retention`.
 */
export function deleteExpiredAuditEntries(
  knex: Knex,
  days: number,
  progress: (deleted: number) => void = () => undefined,
): Promise<number> {
  return deleteInBatches(async (limit) => {
    const result = await knex.raw<{ rows: Array<{ removed: number }> }>(
      `select purge_audit_log(now() - make_interval(days => ?), ?) as removed`,
      [days, limit],
    );
    return Number(result.rows[0]?.removed ?? 0);
  }, progress);
}
