/**
 * What a test run leaves on the Temporal server, removed when it ends (test/helpers/env.ts tearDownEnv):
 * the Schedules its workers created (`retention:<name>:<queue>`, `billing:schedule:<queue>`, which fire every
 * hour or month for as long as they exist) and the workflows still running on its task queues (reports,
 * comparisons, webhook deliveries and batches, dispatchers… whose worker has stopped, so they would stay
 * Running for ever).
 *
 * A run's task queues are its own `test-<runId>` and every `test-<runId>-<suffix>` (`-proc` of the real
 * processes, `-webhooks`, `-files-events`, `-billing-schedule`…, one per test file that needs a worker of its
 * own); a run id has no `-`, so that prefix never names another run's queue.
 *
 * Bounded (a cap on what is handled, a time limit on the whole) and best effort: nothing here throws, what
 * could not be done is in the result, which the caller logs.
 *
 * No dependency on the test environment: scripts/clean-test-leftovers.ts uses the same pieces.
 */
import { ScheduleNotFoundError, WorkflowNotFoundError, type Client } from '@temporalio/client';

export interface CleanupLimits {
  /** Schedules deleted at most */
  maxSchedules: number;
  /** workflows terminated at most */
  maxWorkflows: number;
  /** the whole cleanup (listing included) ends after this long; every request carries this deadline */
  timeLimitMs: number;
}

/** For the end of a run: a run leaves a few hundred workflows at most; on this machine ~1 s per 300. */
export const RUN_CLEANUP_LIMITS: CleanupLimits = {
  maxSchedules: 100,
  maxWorkflows: 2_000,
  timeLimitMs: 20_000,
};

/** Terminations and deletions sent at once. */
const PARALLEL = 16;
/** Schedules looked at (listed) at most, whichever queue they belong to. */
const MAX_SCHEDULES_LISTED = 10_000;

export interface CleanupResult {
  schedulesDeleted: string[];
  workflowsTerminated: number;
  /** listed, but already gone (closed, deleted) when the request reached them */
  alreadyGone: number;
  /** the task queues the terminated workflows were on */
  queues: string[];
  /** more matched than the caps allow: the rest is left */
  capped: boolean;
  /** the time limit ended the cleanup before it was done */
  timedOut: boolean;
  /** what failed (request errors), at most 20 */
  errors: string[];
  elapsedMs: number;
}

const SAFE_QUEUE = /^[A-Za-z0-9_.-]+$/;

function checkQueue(queue: string): string {
  // the queue goes into a visibility query's text
  if (!SAFE_QUEUE.test(queue)) throw new Error(`unexpected task queue name "${queue}"`);
  return queue;
}

/** The visibility filter of a run's task queues: `<runQueue>` and every `<runQueue>-<suffix>`. */
export function runQueuesFilter(runQueue: string): string {
  const q = checkQueue(runQueue);
  return `(TaskQueue = '${q}' OR TaskQueue STARTS_WITH '${q}-')`;
}

/** true when `queue` is the run's queue `runQueue` or one of its suffixed queues. */
export function isRunQueue(queue: string, runQueue: string): boolean {
  return queue === runQueue || queue.startsWith(`${runQueue}-`);
}

/**
 * The task queue a Schedule id of this service names: its last part (worker/worker.ts builds them as
 * `retention:<name>:<task queue>` and `billing:schedule:<task queue>`, with workflowIdentity). The listing
 * of Schedules does not carry their task queue (only a description does, one request each), so the run's
 * Schedules are found by their ids.
 */
export function scheduleIdQueue(scheduleId: string): string {
  return scheduleId.slice(scheduleId.lastIndexOf(':') + 1);
}

/** An error's message with its causes' (the client's "Failed to list workflows" says why only in its cause). */
export function describeError(err: unknown, depth = 0): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause !== undefined && depth < 3
    ? `${err.message}: ${describeError(err.cause, depth + 1)}`
    : err.message;
}

/** A cleanup under way: its deadline, its caps, and what it has done so far. */
export class Cleanup {
  readonly result: CleanupResult = {
    schedulesDeleted: [],
    workflowsTerminated: 0,
    alreadyGone: 0,
    queues: [],
    capped: false,
    timedOut: false,
    errors: [],
    elapsedMs: 0,
  };
  private readonly started = Date.now();
  readonly deadline: number;
  private readonly queues = new Set<string>();
  /** runs already terminated (or found gone) by this cleanup */
  private readonly handled = new Set<string>();

  constructor(
    readonly client: Client,
    readonly limits: CleanupLimits,
  ) {
    this.deadline = this.started + limits.timeLimitMs;
  }

  /** false (and timedOut set) once the time limit is reached */
  inTime(): boolean {
    if (Date.now() < this.deadline) return true;
    this.result.timedOut = true;
    return false;
  }

  fail(what: string, err: unknown): void {
    if (Date.now() >= this.deadline) this.result.timedOut = true;
    if (this.result.errors.length < 20) this.result.errors.push(`${what}: ${describeError(err)}`);
  }

  /** Runs `fn` with every Temporal request carrying the cleanup's deadline; never throws. */
  async run(fn: () => Promise<void>): Promise<CleanupResult> {
    try {
      await this.client.withDeadline(this.deadline, fn);
    } catch (err) {
      this.fail('cleanup', err);
    }
    this.result.queues = [...this.queues].sort();
    this.result.elapsedMs = Date.now() - this.started;
    return this.result;
  }

  /** The ids of the Schedules `select` picks, at most maxSchedules (listing at most MAX_SCHEDULES_LISTED). */
  async listSchedules(select: (scheduleId: string) => boolean): Promise<string[]> {
    const ids: string[] = [];
    let listed = 0;
    try {
      for await (const schedule of this.client.schedule.list({ pageSize: 1_000 })) {
        if (!this.inTime()) break;
        if (++listed > MAX_SCHEDULES_LISTED) {
          this.result.capped = true;
          break;
        }
        if (!select(schedule.scheduleId)) continue;
        if (ids.length === this.limits.maxSchedules) {
          this.result.capped = true;
          break;
        }
        ids.push(schedule.scheduleId);
      }
    } catch (err) {
      this.fail('listing schedules', err);
    }
    return ids;
  }

  async deleteSchedules(ids: readonly string[]): Promise<void> {
    await this.inParallel(ids, async (id) => {
      try {
        await this.client.schedule.getHandle(id).delete();
        this.result.schedulesDeleted.push(id);
      } catch (err) {
        if (err instanceof ScheduleNotFoundError) this.result.alreadyGone++;
        else this.fail(`deleting schedule ${id}`, err);
      }
    });
  }

  /** The running workflows `query` lists (it must hold `ExecutionStatus = 'Running'`), at most maxWorkflows. */
  async listWorkflows(
    query: string,
  ): Promise<Array<{ workflowId: string; runId: string; taskQueue: string }>> {
    const room = this.limits.maxWorkflows - this.result.workflowsTerminated;
    const runs: Array<{ workflowId: string; runId: string; taskQueue: string }> = [];
    try {
      for await (const wf of this.client.workflow.list({ query, pageSize: 1_000 })) {
        if (!this.inTime()) break;
        if (this.handled.has(wf.runId)) continue;
        if (runs.length >= room) {
          this.result.capped = true;
          break;
        }
        runs.push({ workflowId: wf.workflowId, runId: wf.runId, taskQueue: wf.taskQueue });
      }
    } catch (err) {
      this.fail('listing workflows', err);
    }
    return runs;
  }

  async terminate(
    runs: ReadonlyArray<{ workflowId: string; runId: string; taskQueue: string }>,
    reason: string,
  ): Promise<void> {
    await this.inParallel(runs, async (run) => {
      this.handled.add(run.runId);
      try {
        await this.client.workflow.getHandle(run.workflowId, run.runId).terminate(reason);
        this.result.workflowsTerminated++;
        this.queues.add(run.taskQueue);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) this.result.alreadyGone++;
        else this.fail(`terminating ${run.workflowId}`, err);
      }
    });
  }

  /** `fn` over `items`, PARALLEL at a time, until the time limit */
  async inParallel<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (next < items.length && this.inTime()) await fn(items[next++]);
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, lane));
  }
}

/**
 * Removes a test run's Temporal footprint: deletes the Schedules whose id names one of the run's task queues
 * (`runQueue` or `<runQueue>-<suffix>`), then terminates every workflow still running on those queues (the
 * ones those Schedules started included), with `reason`. Call once the run's workers have stopped (a worker
 * still running could start more). Never throws.
 */
export async function cleanUpRunTemporal(
  client: Client,
  runQueue: string,
  options: { reason: string; limits?: Partial<CleanupLimits> },
): Promise<CleanupResult> {
  const cleanup = new Cleanup(client, { ...RUN_CLEANUP_LIMITS, ...options.limits });
  return cleanup.run(async () => {
    const query = `${runQueuesFilter(runQueue)} AND ExecutionStatus = 'Running'`;
    // Schedules first, so that none starts another workflow meanwhile
    await cleanup.deleteSchedules(
      await cleanup.listSchedules((id) => isRunQueue(scheduleIdQueue(id), runQueue)),
    );
    // a second pass catches what visibility had not listed yet the first time (started just before)
    for (let pass = 0; pass < 2 && cleanup.inTime(); pass++) {
      const room = cleanup.limits.maxWorkflows - cleanup.result.workflowsTerminated;
      const runs = await cleanup.listWorkflows(query);
      if (runs.length === 0) break;
      await cleanup.terminate(runs, options.reason);
      if (runs.length >= room) break; // at the cap
    }
  });
}

/** One line for a log: what a cleanup did and what it left. */
export function cleanupSummary(result: CleanupResult): string {
  const parts = [
    `${result.schedulesDeleted.length} schedules deleted`,
    `${result.workflowsTerminated} workflows terminated` +
      (result.queues.length ? ` (on ${result.queues.join(', ')})` : ''),
  ];
  if (result.alreadyGone) parts.push(`${result.alreadyGone} already gone`);
  if (result.capped) parts.push('stopped at its cap: more remain');
  if (result.timedOut) parts.push('stopped at its time limit: more may remain');
  if (result.errors.length) parts.push(`${result.errors.length} errors, first: ${result.errors[0]}`);
  return `${parts.join('; ')} in ${(result.elapsedMs / 1000).toFixed(1)} s`;
}
