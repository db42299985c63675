import type { Knex } from 'knex';

/** Rows a retention pass removes per statement (short statements: no long lock, steady progress). */
export const RETENTION_BATCH = 1000;
/** At most this many batches per pass (10M rows); the next Schedule run goes on. */
const MAX_BATCHES = 10_000;

/**
 * One retention pass: `deleteBatch(limit)` removes at most `limit` expired rows and answers how many it
 * removed; it is called until a batch comes back short. `progress` is told the running total after each batch
 * (an activity heartbeats with it). Used by the webhook-delivery, notification and audit retention Schedules.
 */
export async function deleteInBatches(
  deleteBatch: (limit: number) => Promise<number>,
  progress: (deleted: number) => void = () => undefined,
): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const removed = await deleteBatch(RETENTION_BATCH);
    deleted += removed;
    progress(deleted);
    if (removed < RETENTION_BATCH) break;
  }
  return deleted;
}

/** A batch of `delete … where id in (select id from <table> where created_at < now() - <days> limit n)`. */
export function deleteOlderThan(knex: Knex, table: string, days: number) {
  return async (limit: number): Promise<number> => {
    const result = await knex.raw<{ rowCount: number }>(
      `delete from ?? where id in (
         select id from ?? where created_at < now() - make_interval(days => ?) limit ?)`,
      [table, table, days, limit],
    );
    return result.rowCount;
  };
}
