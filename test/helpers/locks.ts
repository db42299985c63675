import type { Knex } from 'knex';

/**
 * Waits (10 s at most) until at least `waiters` backends of this run's database wait on a lock — a request
 * parked on a row a test holds — or until `done()` (the request answered without waiting).
 */
export async function untilLockWaiters(knex: Knex, waiters: number, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && !done()) {
    const { rows } = (await knex.raw(
      `select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`,
    )) as { rows: Array<{ n: number }> };
    if (rows[0].n >= waiters) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}
