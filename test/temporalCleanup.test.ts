/**
 * The end of a run removes its Temporal footprint (test/helpers/temporalCleanup.ts, called by tearDownEnv):
 * here on a throwaway "run" queue of this run, `test-<runId>-cleanup…`, so the run's own queue is left alone.
 */
import { expect } from 'chai';
import { ScheduleNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { Config } from '../common/config';
import { ensureBillingSchedule, ensureNotificationRetentionSchedule } from '../worker/worker';
import { testEnv } from './helpers/env';
import { eventually } from './helpers/temporal';
import { cleanUpRunTemporal, runQueuesFilter } from './helpers/temporalCleanup';

function onQueue(config: Config, taskQueue: string): Config {
  return { ...config, temporal: { ...config.temporal, taskQueue } };
}

/** A workflow no worker takes (nothing polls the queue): it stays Running, like a stopped run's. */
function startStuck(taskQueue: string, n: number): Promise<WorkflowHandle> {
  return testEnv().temporal.workflow.start('reportWorkflow', {
    taskQueue,
    workflowId: `cleanup-probe:${taskQueue}:${n}`,
    args: [],
  });
}

async function runningCount(filter: string): Promise<number> {
  return (await testEnv().temporal.workflow.count(`${filter} AND ExecutionStatus = 'Running'`)).count;
}

async function listedSchedules(): Promise<string[]> {
  const ids: string[] = [];
  for await (const s of testEnv().temporal.schedule.list()) ids.push(s.scheduleId);
  return ids;
}

async function terminationReason(handle: WorkflowHandle): Promise<string | null | undefined> {
  const history = await handle.fetchHistory();
  return history.events?.at(-1)?.workflowExecutionTerminatedEventAttributes?.reason;
}

describe('Temporal cleanup at the end of a run', function () {
  this.timeout(60_000);

  const probeQueues: string[] = [];
  after(async () => {
    // whatever a failed assertion left (the end of the run would catch it too: these are the run's queues)
    for (const queue of probeQueues)
      await cleanUpRunTemporal(testEnv().temporal, queue, { reason: 'cleanup test done' });
  });

  it("deletes the Schedules of the run's queues, terminates the workflows running on them, and leaves other queues", async () => {
    const { temporal, config, runId } = testEnv();
    const runQueue = `${config.temporal.taskQueue}-cleanup`;
    const procQueue = `${runQueue}-proc`;
    // shares the prefix but not the dash: another run's queue as far as this cleanup is concerned
    const otherQueue = `${runQueue}x`;
    probeQueues.push(runQueue, otherQueue);

    const schedules = [
      await ensureNotificationRetentionSchedule(temporal, onQueue(config, procQueue)),
      await ensureBillingSchedule(temporal, onQueue(config, runQueue)),
    ];
    expect(schedules).to.deep.equal([`retention:notifications:${procQueue}`, `billing:schedule:${runQueue}`]);
    const otherSchedule = await ensureNotificationRetentionSchedule(temporal, onQueue(config, otherQueue));
    // a Schedule's firing that no worker takes: Running for ever, as found on the dev server
    await temporal.schedule.getHandle(schedules[0]).trigger();
    const stuck = [await startStuck(runQueue, 1), await startStuck(procQueue, 2)];
    const other = await startStuck(otherQueue, 3);
    // what the cleanup lists (visibility) shows all of it first
    await eventually(async () => (await runningCount(runQueuesFilter(runQueue))) === 3, {
      what: "three running workflows on the run's queues",
    });
    await eventually(
      async () => {
        const listed = await listedSchedules();
        return [...schedules, otherSchedule].every((id) => listed.includes(id));
      },
      { what: 'the schedules listed' },
    );

    const reason = `test run ${runId}: cleanup test`;
    const result = await cleanUpRunTemporal(temporal, runQueue, { reason });
    expect(result.errors).to.deep.equal([]);
    expect(result).to.include({ capped: false, timedOut: false, workflowsTerminated: 3 });
    expect(result.schedulesDeleted).to.have.members(schedules);
    expect(result.queues).to.deep.equal([procQueue, runQueue].sort());
    expect(result.elapsedMs).to.be.below(5_000);

    // gone: each Schedule, and each workflow terminated with the reason (the server's own records)...
    for (const id of schedules) {
      const described = await temporal.schedule
        .getHandle(id)
        .describe()
        .then(
          () => 'still there',
          (err: unknown) => err,
        );
      expect(described, id).to.be.instanceOf(ScheduleNotFoundError);
    }
    for (const handle of stuck) {
      expect((await handle.describe()).status.name, handle.workflowId).to.equal('TERMINATED');
      expect(await terminationReason(handle)).to.equal(reason);
    }
    // ...and in the lists an operator sees (the Web UI's): nothing of the run's queues
    await eventually(async () => (await runningCount(runQueuesFilter(runQueue))) === 0, {
      what: "no running workflow on the run's queues",
    });
    await eventually(async () => !(await listedSchedules()).some((id) => schedules.includes(id)), {
      what: 'the schedules no longer listed',
    });

    // another queue's Schedule and workflow are still there
    expect((await other.describe()).status.name).to.equal('RUNNING');
    expect((await temporal.schedule.getHandle(otherSchedule).describe()).action).to.include({
      taskQueue: otherQueue,
    });
  });

  it('stops at its cap and at its time limit without throwing; a later call finishes', async () => {
    const { temporal, config, runId } = testEnv();
    const runQueue = `${config.temporal.taskQueue}-cleanup2`;
    probeQueues.push(runQueue);
    const stuck = [
      await startStuck(runQueue, 1),
      await startStuck(runQueue, 2),
      await startStuck(runQueue, 3),
    ];
    await eventually(async () => (await runningCount(runQueuesFilter(runQueue))) === 3, {
      what: 'three running workflows',
    });
    const reason = `test run ${runId}: cleanup test`;

    const timedOut = await cleanUpRunTemporal(temporal, runQueue, { reason, limits: { timeLimitMs: 1 } });
    expect(timedOut).to.include({ timedOut: true, workflowsTerminated: 0 });

    const capped = await cleanUpRunTemporal(temporal, runQueue, { reason, limits: { maxWorkflows: 2 } });
    expect(capped).to.include({ capped: true, workflowsTerminated: 2 });
    expect(capped.errors).to.deep.equal([]);

    await eventually(
      async () => {
        await cleanUpRunTemporal(temporal, runQueue, { reason });
        const statuses = await Promise.all(stuck.map(async (h) => (await h.describe()).status.name));
        return statuses.every((s) => s === 'TERMINATED');
      },
      { what: 'all three terminated' },
    );
  });
});
