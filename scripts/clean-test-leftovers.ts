/**
 * Developers: removes from a Temporal server what earlier test runs left on it (README "Temporal Web UI for
 * operators"). A run cleans up after itself when it ends (test/helpers/temporalCleanup.ts); runs from before
 * that, or killed ones, left Schedules that fire for ever on their `test-*` task queues and workflows Running
 * for ever on them.
 *   npm run test:clean-temporal                # TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE as for the service
 *   npm run test:clean-temporal -- --dry-run   # only say what it would remove
 *
 * Only `test-*` task queues, and never those of a run that may still be going:
 *   - a workflow is terminated only if it started more than an hour ago and nothing polls its queue or its
 *     run's queue (`test-<runId>`);
 *   - a Schedule (its id names a `test-*` queue, and so does its action) is deleted only if it was created
 *     more than an hour ago and nothing polls its queue or its run's queue.
 * A whole test run takes about 10 minutes. What started within the hour (e.g. the last firing of a leftover
 * Schedule) is left for a later call. Bounded: at most --max workflows (default 10,000) and 5 minutes.
 */
import { parseArgs } from 'node:util';
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { loadConfig } from '../common/config';
import { createTemporalClient } from '../common/temporal';
import { Cleanup, describeError, scheduleIdQueue } from '../test/helpers/temporalCleanup';

const MIN_AGE_MS = 3600_000;
const TIME_LIMIT_MS = 5 * 60_000;
const TEST_QUEUE = /^test-[A-Za-z0-9_.-]+$/;

/** `test-<runId>` of a run's queue `test-<runId>` or `test-<runId>-<suffix>` */
function runQueueOf(queue: string): string {
  return /^test-[^-]+/.exec(queue)?.[0] ?? queue;
}

/**
 * Whether anything polled the queue lately (the server lists pollers of the last few minutes). A queue that
 * cannot be described counts as polled: it is left alone.
 */
function pollerCheck(client: Client, cleanup: Cleanup): (queue: string) => Promise<boolean> {
  const seen = new Map<string, Promise<boolean>>();
  const { TaskQueueType, TaskQueueKind } = temporal.api.enums.v1;
  const polled = async (queue: string) => {
    try {
      for (const taskQueueType of [
        TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
      ]) {
        const answer = await client.workflowService.describeTaskQueue({
          namespace: client.options.namespace,
          taskQueue: { name: queue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
          taskQueueType,
        });
        if ((answer.pollers ?? []).length > 0) return true;
      }
      return false;
    } catch (err) {
      cleanup.fail(`describing task queue ${queue}`, err);
      return true;
    }
  };
  return (queue) => {
    let answer = seen.get(queue);
    if (!answer) seen.set(queue, (answer = polled(queue)));
    return answer;
  };
}

async function counts(client: Client): Promise<{ running: number; schedules: number }> {
  const running = await client.workflow.count(
    `TaskQueue STARTS_WITH 'test-' AND ExecutionStatus = 'Running'`,
  );
  let schedules = 0;
  for await (const s of client.schedule.list())
    if (TEST_QUEUE.test(scheduleIdQueue(s.scheduleId))) schedules++;
  return { running: running.count, schedules };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'dry-run': { type: 'boolean', default: false }, max: { type: 'string', default: '10000' } },
  });
  const max = Number(values.max);
  if (!Number.isInteger(max) || max < 1) {
    console.error('usage: test:clean-temporal -- [--dry-run] [--max <workflows>]');
    process.exit(2);
  }
  const dryRun = values['dry-run'];
  const config = loadConfig();
  const client = createTemporalClient(config);
  const cutoff = new Date(Date.now() - MIN_AGE_MS);
  const cleanup = new Cleanup(client, { maxSchedules: 1_000, maxWorkflows: max, timeLimitMs: TIME_LIMIT_MS });
  const polled = pollerCheck(client, cleanup);
  const isPolled = async (queue: string) => (await polled(queue)) || (await polled(runQueueOf(queue)));
  const left = { youngSchedules: 0, youngWorkflows: 0, polledSchedules: 0, polledWorkflows: 0 };
  let planned = { schedules: 0, workflows: 0 };
  try {
    const before = await client.withDeadline(cleanup.deadline, () => counts(client));
    console.log(
      `${config.temporal.address} (${config.temporal.namespace}): ${before.running} workflows running on test-* ` +
        `task queues, ${before.schedules} Schedules of test-* task queues`,
    );
    const result = await cleanup.run(async () => {
      // Schedules first, so that none starts another workflow meanwhile
      const schedules: string[] = [];
      const candidates = await cleanup.listSchedules((id) => TEST_QUEUE.test(scheduleIdQueue(id)));
      await cleanup.inParallel(candidates, async (id) => {
        const described = await client.schedule
          .getHandle(id)
          .describe()
          .catch((err: unknown) => cleanup.fail(`describing schedule ${id}`, err));
        if (!described) return;
        const queue = described.action.type === 'startWorkflow' ? described.action.taskQueue : '';
        if (!TEST_QUEUE.test(queue)) return;
        if (described.info.createdAt > cutoff) left.youngSchedules++;
        else if (await isPolled(queue)) left.polledSchedules++;
        else schedules.push(id);
      });
      const running = `TaskQueue STARTS_WITH 'test-' AND ExecutionStatus = 'Running'`;
      left.youngWorkflows = (
        await client.workflow.count(`${running} AND StartTime >= '${cutoff.toISOString()}'`)
      ).count;
      const runs = (
        await cleanup.listWorkflows(`${running} AND StartTime < '${cutoff.toISOString()}'`)
      ).filter((run) => TEST_QUEUE.test(run.taskQueue));
      const polledQueues = new Set<string>();
      await cleanup.inParallel([...new Set(runs.map((run) => run.taskQueue))], async (queue) => {
        if (await isPolled(queue)) polledQueues.add(queue);
      });
      const byRun = new Map<string, typeof runs>();
      for (const run of runs) {
        if (polledQueues.has(run.taskQueue)) {
          left.polledWorkflows++;
          continue;
        }
        const runQueue = runQueueOf(run.taskQueue);
        if (!byRun.has(runQueue)) byRun.set(runQueue, []);
        byRun.get(runQueue)!.push(run);
      }
      planned = {
        schedules: schedules.length,
        workflows: [...byRun.values()].reduce((n, r) => n + r.length, 0),
      };
      if (dryRun) return;
      await cleanup.deleteSchedules(schedules);
      for (const [runQueue, runs] of byRun) {
        if (!cleanup.inTime()) break;
        await cleanup.terminate(
          runs,
          `left by test run ${runQueue.slice('test-'.length)}; removed by scripts/clean-test-leftovers.ts`,
        );
      }
    });
    if (dryRun)
      console.log(
        `dry run: would delete ${planned.schedules} Schedules and terminate ${planned.workflows} workflows`,
      );
    else
      console.log(
        `deleted ${result.schedulesDeleted.length} Schedules, terminated ${result.workflowsTerminated} workflows` +
          ` on ${result.queues.length} task queues` +
          (result.alreadyGone ? ` (${result.alreadyGone} were already gone)` : ''),
      );
    console.log(
      `left alone: made within the hour ${left.youngSchedules} Schedules and ${left.youngWorkflows} workflows; ` +
        `on a queue something polls ${left.polledSchedules} Schedules and ${left.polledWorkflows} workflows`,
    );
    if (result.capped) console.log(`stopped at the cap (--max ${max}): run it again for the rest`);
    if (result.timedOut) console.log('stopped at the time limit (5 minutes): run it again for the rest');
    for (const error of result.errors) console.error(error);
    if (!dryRun) {
      const after = await client.withDeadline(Date.now() + 30_000, () => counts(client));
      console.log(
        `now: ${after.running} workflows running on test-* task queues, ` +
          `${after.schedules} Schedules of test-* task queues`,
      );
    }
    if (result.errors.length) process.exitCode = 1;
  } finally {
    await client.connection.close().catch(() => undefined);
  }
}

main().catch((err: unknown) => {
  console.error(describeError(err));
  process.exit(1);
});
