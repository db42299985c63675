/**
 * Runs `task` for every item on each of `lanes` at once: a lane takes the next item when its previous one is
 * done (a connection, a slot, a lane number — whatever the task needs to run beside the others). After a
 * failure no item is started; the items running settle before the first error is thrown, so nothing is left
 * running on a resource the caller is about to close.
 */
export async function onEach<L, T>(
  lanes: readonly L[],
  items: readonly T[],
  task: (lane: L, item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const results = await Promise.allSettled(
    lanes.map(async (lane) => {
      while (!failed && next < items.length) {
        await task(lane, items[next++]).catch((err: unknown) => {
          failed = true;
          throw err;
        });
      }
    }),
  );
  for (const r of results) if (r.status === 'rejected') throw r.reason;
}

/** `n` lanes (at least one) named 0 … n − 1, for tasks that need no resource of their own. */
export function laneNumbers(n: number): number[] {
  return Array.from({ length: Math.max(1, n) }, (_, i) => i);
}

/** `items` in consecutive groups of `size` (the last may be smaller): columns taken a few to a query. */
export function batches<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
