import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import type { Logger } from '../common/logger';
import { claimAndDispatch, waitForEvents, type FanOut } from '../db/outbox';

const SWEEP_EVERY_MS = 5_000;

export interface OutboxDeps {
  knex: Knex;
  logger: Logger;
  batchSize: number;
  idleWaitMs: number;
  /** the capabilities' consumer of claimed events (db/outbox.ts); the webhooks fan-out in the worker */
  fanOut?: FanOut;
  /**
   * Work to repair what a crash left behind (e.g. deliveries committed but whose workflows were never
   * started), run at the start of a dispatcher activity run, at most every SWEEP_EVERY_MS.
   */
  sweep?: () => Promise<unknown>;
}

export interface DispatchResult {
  dispatched: number;
}

/** The outbox dispatcher's activity (the outbox itself is db/outbox.ts). */
export function createOutboxActivities(deps: OutboxDeps) {
  const { knex, logger, batchSize, idleWaitMs } = deps;
  let lastSweep = 0;

  async function sweep(): Promise<void> {
    if (!deps.sweep || Date.now() - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = Date.now();
    try {
      await deps.sweep();
    } catch (err) {
      logger.error({ err }, 'outbox sweep failed');
    }
  }

  return {
    /**
     * One dispatcher iteration: for up to the idle wait, dispatch what is waiting, batch after batch, and
     * when nothing is, wait (heartbeating) for a new event. One activity serves many batches, so a busy
     * outbox costs Temporal one activity per idle wait, not one per batch. Stops early when the
     * dispatcher workflow is gone (the heartbeat reports it cancelled).
     */
    async dispatchOutbox(): Promise<DispatchResult> {
      const context = Context.current();
      const until = Date.now() + idleWaitMs;
      const heartbeat = setInterval(() => context.heartbeat(), 2_000);
      let dispatched = 0;
      try {
        await sweep();
        while (!context.cancellationSignal.aborted) {
          const count = await claimAndDispatch(knex, batchSize, deps.fanOut);
          if (count > 0) logger.debug({ count }, 'outbox batch dispatched');
          dispatched += count;
          const left = until - Date.now();
          if (left <= 0) break;
          if (count === 0) await waitForEvents(knex, left, context.cancellationSignal);
        }
      } finally {
        clearInterval(heartbeat);
      }
      return { dispatched };
    },
  };
}

export type OutboxActivities = ReturnType<typeof createOutboxActivities>;
