import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import type { Logger } from '../common/logger';
import type { OutboxEvent } from '../db/models';

/** What a fan-out step wants done once the claimed batch has committed. */
export type AfterCommit = () => Promise<void>;

/**
 * Turns claimed events into work inside the claiming transaction (e.g. delivery records) and returns what
 * must happen after commit (e.g. start delivery workflows, whose ids derive from the records).
 */
export type FanOut = (trx: Knex.Transaction, events: OutboxEvent[]) => Promise<AfterCommit[]>;

const SWEEP_EVERY_MS = 5_000;

export interface OutboxDeps {
  knex: Knex;
  logger: Logger;
  batchSize: number;
  idleWaitMs: number;
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

  /** Claims unsent rows with FOR UPDATE SKIP LOCKED, so several dispatchers never take the same row. */
  async function claimAndDispatch(): Promise<number> {
    const afterCommit: AfterCommit[] = [];
    const count = await knex.transaction(async (trx) => {
      const rows = (await trx('outbox')
        .select('*')
        .whereNull('dispatchedAt')
        .orderBy([{ column: 'createdAt' }, { column: 'id' }])
        .limit(batchSize)
        .forUpdate()
        .skipLocked()) as OutboxEvent[];
      if (rows.length === 0) return 0;
      if (deps.fanOut) afterCommit.push(...(await deps.fanOut(trx, rows)));
      await trx('outbox')
        .whereIn(
          'id',
          rows.map((r) => r.id),
        )
        .update({ dispatchedAt: trx.fn.now() });
      return rows.length;
    });
    for (const step of afterCommit) await step();
    if (count > 0) logger.debug({ count }, 'outbox batch dispatched');
    return count;
  }

  /** Resolves when an outbox row commits (NOTIFY from the insert trigger), after `ms`, or on `abort`. */
  async function waitForEvents(ms: number, abort: AbortSignal): Promise<void> {
    const client = knex.client as {
      acquireConnection(): Promise<PgConnection>;
      releaseConnection(c: PgConnection): Promise<void>;
    };
    const conn = await client.acquireConnection();
    let timer: NodeJS.Timeout | undefined;
    let onNotify: (() => void) | undefined;
    let onAbort: (() => void) | undefined;
    try {
      await conn.query('LISTEN outbox');
      await new Promise<void>((resolve) => {
        onNotify = resolve;
        conn.on('notification', onNotify);
        timer = setTimeout(resolve, ms);
        onAbort = resolve;
        abort.addEventListener('abort', onAbort);
      });
    } finally {
      if (timer) clearTimeout(timer);
      if (onAbort) abort.removeEventListener('abort', onAbort);
      if (onNotify) conn.removeListener('notification', onNotify);
      await conn.query('UNLISTEN outbox').catch(() => undefined);
      await client.releaseConnection(conn);
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
          const count = await claimAndDispatch();
          dispatched += count;
          const left = until - Date.now();
          if (left <= 0) break;
          if (count === 0) await waitForEvents(left, context.cancellationSignal);
        }
      } finally {
        clearInterval(heartbeat);
      }
      return { dispatched };
    },
  };
}

interface PgConnection {
  query(sql: string): Promise<unknown>;
  on(event: 'notification', fn: () => void): void;
  removeListener(event: 'notification', fn: () => void): void;
}

export type OutboxActivities = ReturnType<typeof createOutboxActivities>;
