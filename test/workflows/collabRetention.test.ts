/**
 * Retention (issue 15 items 4 and 7): notifications older than 90 days and audit entries older than
 * AUDIT_RETENTION_DAYS (default 365) are removed by their workflows, run by Temporal Schedules created
 * idempotently at worker start; younger rows stay.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ensureAuditRetentionSchedule, ensureNotificationRetentionSchedule } from '../../worker/worker';
import { startWorker, testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';

const DAY = 24 * 3600_000;

describe('retention of notifications and audit entries', function () {
  this.timeout(120_000);
  let stop: () => Promise<void>;

  before(async () => {
    const worker = await startWorker();
    stop = () => worker.stop();
  });
  after(async () => {
    await stop();
  });

  it('removes notifications older than 90 days through the retention workflow, and keeps younger ones', async () => {
    const { knex, temporal, config } = testEnv();
    const team = await createTeam();
    const make = async (ageMs: number) => {
      const id = randomUUID();
      await knex('notifications').insert({
        id,
        companyId: team.company.id,
        personId: team.admin.id,
        kind: 'quota.threshold',
        resourceType: 'company',
        resourceId: team.company.id,
        dedupeKey: `retention:${id}`,
        createdAt: new Date(Date.now() - ageMs),
      });
      return id;
    };
    const old = await make(91 * DAY);
    const young = await make(89 * DAY);
    const fresh = await make(0);
    const result = (await temporal.workflow.execute('notificationRetentionWorkflow', {
      workflowId: `retention:notifications:test-${randomUUID()}`,
      taskQueue: config.temporal.taskQueue,
    })) as { deleted: number };
    expect(result.deleted).to.be.at.least(1);
    const left = (
      (await knex('notifications').where({ personId: team.admin.id })) as Array<{ id: string }>
    ).map((r) => r.id);
    expect(left).to.include.members([young, fresh]);
    expect(left).to.not.include(old);
  });

  it('removes audit entries older than the retention (365 days by default) through purge_audit_log only', async () => {
    const { knex, temporal, config } = testEnv();
    expect(config.auditRetentionDays).to.equal(365);
    const team = await createTeam();
    const make = async (ageMs: number) => {
      const id = randomUUID();
      await knex('auditLog').insert({
        id,
        companyId: team.company.id,
        action: 'test.retention',
        resourceType: 'test',
        createdAt: new Date(Date.now() - ageMs),
      });
      return id;
    };
    const old = await make(366 * DAY);
    const young = await make(364 * DAY);
    const result = (await temporal.workflow.execute('auditRetentionWorkflow', {
      workflowId: `retention:audit-log:test-${randomUUID()}`,
      taskQueue: config.temporal.taskQueue,
    })) as { deleted: number };
    expect(result.deleted).to.be.at.least(1);
    const left = (
      (await knex('auditLog').where({ companyId: team.company.id, action: 'test.retention' })) as Array<{
        id: string;
      }>
    ).map((r) => r.id);
    expect(left).to.deep.equal([young]);
    expect(left).to.not.include(old);
  });

  it('both are Temporal Schedules, created idempotently', async () => {
    const { temporal, config } = testEnv();
    for (const [ensure, name, workflowType] of [
      [ensureNotificationRetentionSchedule, 'notifications', 'notificationRetentionWorkflow'],
      [ensureAuditRetentionSchedule, 'audit-log', 'auditRetentionWorkflow'],
    ] as const) {
      const id = await ensure(temporal, config);
      expect(await ensure(temporal, config)).to.equal(id);
      expect(id).to.equal(`retention:${name}:${config.temporal.taskQueue}`);
      const handle = temporal.schedule.getHandle(id);
      try {
        const description = await handle.describe();
        expect((description.action as { workflowType: string }).workflowType).to.equal(workflowType);
        expect(description.spec.intervals?.[0]?.every).to.equal(3600_000);
      } finally {
        await handle.delete();
      }
    }
  });
});
