import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import type { FanOut } from '../../db/outbox';
import { Company, OutboxEvent } from '../../db/models';
import { transact } from '../../db/transaction';
import { ensureOutboxDispatcher } from '../../worker/worker';
import { COMPANY_ID } from '../../workflows/shared';
import { outboxDispatcherWorkflow } from '../../workflows/outboxDispatcher';
import { startWorker, testEnv, workflowBundle } from '../helpers/env';
import { eventually, temporalCliPath } from '../helpers/temporal';

async function newCompany(): Promise<Company> {
  return Company.query(testEnv().knex).insert({
    id: randomUUID(),
    name: 'Outbox Co',
    status: 'active',
    plan: 'free',
  });
}

async function emitEvents(companyId: string, n: number): Promise<string[]> {
  return transact(testEnv().knex, async ({ emit }) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(await emit({ companyId, type: 'ping', data: { n: i } }));
    return ids;
  });
}

async function allDispatched(ids: string[]): Promise<boolean> {
  const rows = await OutboxEvent.query(testEnv().knex).whereIn('id', ids).whereNotNull('dispatchedAt');
  return rows.length === ids.length;
}

describe('outbox dispatcher workflow', function () {
  this.timeout(90_000);

  it('runs under @temporalio/testing with the local temporal binary and dispatches rows', async () => {
    const { config, knex, logger } = testEnv();
    const env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: temporalCliPath() },
        searchAttributes: [COMPANY_ID],
        ip: '127.0.0.1',
      },
    });
    try {
      const seen: string[] = [];
      const fanOut: FanOut = async (_trx, events) => {
        seen.push(...events.map((e) => e.id));
        return [];
      };
      const taskQueue = `dispatcher-${randomUUID()}`;
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        workflowBundle: await workflowBundle(),
        activities: createActivities({ config, knex, logger, fanOut }),
      });
      const company = await newCompany();
      const ids = await emitEvents(company.id, 3);
      await worker.runUntil(async () => {
        const handle = await env.client.workflow.start(outboxDispatcherWorkflow, {
          taskQueue,
          workflowId: `outbox-dispatcher:${taskQueue}`,
        });
        await eventually(() => allDispatched(ids), { what: 'rows dispatched' });
        await handle.terminate('test done');
      });
      expect(seen).to.include.members(ids);
    } finally {
      await env.teardown();
    }
  });

  it('end to end on the local Temporal server: one dispatcher per task queue, events fanned out once, rolled back ones never', async () => {
    const { config, temporal, knex } = testEnv();
    const seen: string[] = [];
    await startWorker({
      fanOut: async (_trx, events) => {
        seen.push(...events.map((e) => e.id));
        return [];
      },
    });
    const first = await ensureOutboxDispatcher(temporal, config);
    const second = await ensureOutboxDispatcher(temporal, config);
    expect(first).to.equal(second).and.to.equal(`outbox-dispatcher:${config.temporal.taskQueue}`);
    const description = await temporal.workflow.getHandle(first).describe();
    expect(description.status.name).to.equal('RUNNING');
    expect(description.typedSearchAttributes.get(COMPANY_ID)).to.equal('_system');

    const company = await newCompany();
    // a rolled-back change: its event never exists, so it is never dispatched
    await transact(knex, async ({ emit }) => {
      await emit({ companyId: company.id, type: 'ping', data: { rolledBack: true } });
      throw new Error('abort');
    }).catch(() => undefined);
    const ids = await emitEvents(company.id, 5);
    await eventually(() => allDispatched(ids), { what: 'rows dispatched', timeoutMs: 20_000 });
    expect(seen.filter((id) => ids.includes(id))).to.have.lengthOf(5);
    expect(new Set(seen).size).to.equal(seen.length);
    const all = await OutboxEvent.query(knex).where({ companyId: company.id });
    expect(all).to.have.lengthOf(5);
    await temporal.workflow.getHandle(first).terminate('test done');
  });
});
