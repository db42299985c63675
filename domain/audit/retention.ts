import type { Knex } from 'knex';

/**
 * Removes audit entries older than `days` (AUDIT_RETENTION_DAYS, default 365), 1000 at a time, through
 * `purge_audit_log` — the only way to delete an entry: the application roles may not delete from audit_log
 * (20261123001020_audit_log). The caller acts as the system task `audit-retention`.
 */
export async function deleteExpiredAuditEntries(
  knex: Knex,
  days: number,
  progress: (deleted: number) => void = () => undefined,
): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < 10_000; batch++) {
    const result = await knex.raw<{ rows: Array<{ removed: number }> }>(
      `select purge_audit_log(now() - make_interval(days => ?), 1000) as removed`,
      [days],
    );
    const removed = Number(result.rows[0]?.removed ?? 0);
    deleted += removed;
    progress(deleted);
    if (removed < 1000) break;
  }
  return deleted;
}
