import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createLogger, type Logger } from '../common/logger';
import { OutboxEvent } from './models';
import { currentActing, transactionActingAs, type Acting } from './unitOfWork';

/** Event types of the spec's Events table (plus `ping`). */
export const EVENT_TYPES = [
  'file.uploaded',
  'file.sensitive_data_found',
  'dataset.changed',
  'dataset.schema_changed',
  'report.ready',
  'report.failed',
  'rules.failed',
  'quota.threshold',
  'invoice.finalized',
  'ping',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface NewEvent {
  companyId: string;
  type: EventType;
  /** ids and numbers only, never cell values */
  data: Record<string, unknown>;
}

export interface UnitOfWork {
  trx: Knex.Transaction;
  /** the request's correlation id (transact's option): stamped on the events and the audit entries */
  correlationId?: string;
  /** Writes the event into the outbox in this transaction: it exists if and only if the change commits. */
  emit: (event: NewEvent) => Promise<string>;
  /** Runs after a successful commit (e.g. start a workflow); never runs when the transaction rolls back. */
  afterCommit: (fn: () => Promise<void> | void) => void;
}

export interface TransactOptions {
  /** Who acts (db/unitOfWork.ts); the surrounding scope's actor (the request's principal) when not given. */
  acting?: Acting;
  correlationId?: string;
  /**
   * Called for each error thrown by an after-commit hook. The change is saved by then, so transact never
   * rethrows it (an error answer would invite a retry that duplicates the change); by default it is logged.
   */
  onAfterCommitError?: (err: unknown) => void;
  /** Where the default `onAfterCommitError` logs; a module-level logger when not given. */
  log?: Logger;
  /** How long transact waits for its after-commit hooks in all (AFTER_COMMIT_WAIT_MS when not given). */
  afterCommitWaitMs?: number;
}

/**
 * How long `transact` waits for its after-commit hooks, all of them together, before it returns: the change
 * is saved by then, and what follows it (a workflow start or cancellation, a mail, an object removal) must
 * not hold the caller's answer while a dependency hangs — a Temporal server that accepts connections and
 * does not answer held POST /comparisons or a rebuild for minutes, while the client retried. A hook still
 * running goes on in the background (its failure logged as always); what it was to do is repaired as when it
 * fails (the file sweep starts reports and comparisons still queued, the outbox dispatcher deliveries).
 */
export const AFTER_COMMIT_WAIT_MS = 5_000;

let fallbackLog: Logger | undefined;
function defaultLog(): Logger {
  fallbackLog ??= createLogger(process.env.LOG_LEVEL ?? 'info', 'transaction');
  return fallbackLog;
}

/**
 * Runs `work` in one unit of work (db/unitOfWork.ts: the acting company or system task is set first)
 * together with the events it emits.
 */
export async function transact<T>(
  knex: Knex,
  work: (uow: UnitOfWork) => Promise<T>,
  options: TransactOptions = {},
): Promise<T> {
  const hooks: Array<() => Promise<void> | void> = [];
  const result = await transactionActingAs(knex, options.acting ?? currentActing(), async (trx) => {
    const uow: UnitOfWork = {
      trx,
      correlationId: options.correlationId,
      emit: async (event) => {
        const id = randomUUID();
        await OutboxEvent.query(trx).insert({
          id,
          companyId: event.companyId,
          type: event.type,
          data: event.data,
          correlationId: options.correlationId ?? null,
        });
        return id;
      },
      afterCommit: (fn) => {
        hooks.push(fn);
      },
    };
    return work(uow);
  });
  // committed: every hook runs, and none of their errors turns the saved change into a failure; past the wait,
  // the hooks left run without being waited for
  await runAfterCommitHooks(hooks, {
    waitMs: options.afterCommitWaitMs ?? AFTER_COMMIT_WAIT_MS,
    onError: (err) => {
      if (options.onAfterCommitError) options.onAfterCommitError(err);
      else
        (options.log ?? defaultLog()).error(
          { err, correlationId: options.correlationId },
          'after-commit hook failed; the change is saved',
        );
    },
    onLeft: () =>
      (options.log ?? defaultLog()).warn(
        { correlationId: options.correlationId },
        'an after-commit hook still runs; not waiting for it',
      ),
  });
  return result;
}

/**
 * Runs what a committed change left to do, each hook's failure given to `onError` (never thrown: the change is
 * saved). Hooks start in their order, each waited for until `waitMs` (in all) has passed; past it, the hooks
 * left start without being waited for — one hanging hook (a Temporal that does not answer) neither holds the
 * caller nor keeps the next hooks from running — and `onLeft` is told. Used by `transact` and the demo's seeding.
 */
export async function runAfterCommitHooks(
  hooks: ReadonlyArray<() => void | Promise<void>>,
  options: { waitMs: number; onError: (err: unknown) => void; onLeft?: () => void },
): Promise<void> {
  const deadline = Date.now() + options.waitMs;
  for (const hook of hooks) {
    const running = (async () => hook())().catch(options.onError);
    const left = deadline - Date.now();
    if (left <= 0) continue;
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      running.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), left);
      }),
    ]);
    clearTimeout(timer);
    if (!waited) options.onLeft?.();
  }
}
