import { expect } from 'chai';
import { NO_PLAN_MESSAGE, requirePlan } from '../../api/middlewares/plan';
import { mapError } from '../../api/middlewares/errors';
import { PlanRequiredError } from '../../domain/plans/errors';
import { PLANS, periodKey } from '../../domain/plans/plans';
import { apiClient } from '../helpers/client';
import { createApiKey, createTeam } from '../helpers/factories';
import { expectErrorBody } from '../helpers/http';
import { testEnv } from '../helpers/env';
import { platformTestRoutes, type PlatformTestRoutes } from '../helpers/platformRoutes';
import { startApp } from '../helpers/servers';

async function auditOf(companyId: string) {
  return (await testEnv()
    .knex('auditLog')
    .where({ companyId, resourceType: 'subscription' })
    .orderBy('createdAt')
    .select('action', 'details', 'actorPersonId', 'resourceId')) as Array<{
    action: string;
    details: Record<string, unknown>;
    actorPersonId: string;
    resourceId: string;
  }>;
}

describe('plans and subscriptions', () => {
  let baseUrl: string;
  before(async () => {
    baseUrl = (await startApp({ extraRoutes: platformTestRoutes })).baseUrl;
  });

  it('requirePlan gives the plan, or 402 without one, from a context or a principal', () => {
    const principal = { kind: 'session', personId: 'p', companyId: 'c', role: 'admin', demo: false } as const;
    expect(requirePlan({ ...principal, companyPlan: 'basic' })).to.equal('basic');
    expect(() => requirePlan({ ...principal, companyPlan: null })).to.throw(PlanRequiredError);
    expect(mapError(new PlanRequiredError())).to.include({ status: 402, message: NO_PLAN_MESSAGE });
    expect(requirePlan({ state: { auth: { ...principal, companyPlan: 'free' } } } as never)).to.equal('free');
  });

  it('GET /plans lists the three plans and their limits', async () => {
    const res = await apiClient().get('/plans');
    expect(res.status).to.equal(200);
    expect(res.body.data.map((p) => p.name)).to.deep.equal(['free', 'basic', 'premium']);
    expect(res.body.data[0].limits).to.deep.equal(PLANS.free);
    expect(res.body.data.map((p) => p.limits.requestsPerMinute)).to.deep.equal([30, 120, 600]);
    expect(res.body.data.map((p) => p.limits.webhookEndpoints)).to.deep.equal([1, 5, null]);
    expect(res.body.data[0].limits.filesPerPeriod).to.equal(10);
  });

  it('a company without a plan gets 402 on work that needs one until an admin chooses (audited)', async () => {
    const team = await createTeam({ plan: null });
    const admin = apiClient<PlatformTestRoutes>({ token: team.adminToken, baseUrl });
    const employee = apiClient<PlatformTestRoutes>({ token: team.employeeToken, baseUrl });

    const blocked = await employee.get('/_test/needs-plan');
    expect(expectErrorBody(blocked, 402).message).to.equal('choose a plan first (PATCH /subscriptions/me)');
    const before = await employee.get('/subscriptions/me');
    expect(before.status).to.equal(200);
    expect(before.body).to.include({ plan: null, limits: null, filesLimit: null, filesUsed: 0 });

    const chosen = await admin.patch('/subscriptions/me', { body: { plan: 'basic' } });
    expect(chosen.status).to.equal(200);
    expect(chosen.body.plan).to.equal('basic');
    expect(chosen.body.limits).to.deep.equal(PLANS.basic);
    expect(chosen.body.filesLimit).to.equal(PLANS.basic.filesPerPeriod);
    expect((await employee.get('/_test/needs-plan')).body).to.deep.equal({ plan: 'basic' });

    const changed = await admin.patch('/subscriptions/me', { body: { plan: 'premium' } });
    expect(changed.body.plan).to.equal('premium');
    await admin.patch('/subscriptions/me', { body: { plan: 'premium' } }); // same plan: nothing changes
    const audit = await auditOf(team.company.id);
    expect(audit.map((a) => [a.action, a.details])).to.deep.equal([
      ['subscription.plan_chosen', { from: null, to: 'basic' }],
      ['subscription.plan_changed', { from: 'basic', to: 'premium' }],
    ]);
    expect(
      audit.every((a) => a.actorPersonId === team.admin.id && a.resourceId === team.company.id),
    ).to.equal(true);
  });

  it('an API key needs files:read to read the plan, and can never change it', async () => {
    const team = await createTeam({ plan: 'free' });
    const reader = await createApiKey(team.admin, ['files:read', 'files:write']);
    const notifier = await createApiKey(team.admin, ['notifications:read']);
    const read = await apiClient({ token: reader }).get('/subscriptions/me');
    expect(read.status).to.equal(200);
    expect(read.body.plan).to.equal('free');
    expectErrorBody(await apiClient({ token: notifier }).get('/subscriptions/me'), 403);
    const change = await apiClient({ token: reader }).patch('/subscriptions/me', {
      body: { plan: 'premium' },
    });
    expectErrorBody(change, 403);
  });

  it('only an admin chooses; employees get 403; a wrong plan name is 400', async () => {
    const team = await createTeam({ plan: 'free' });
    const res = await apiClient({ token: team.employeeToken }).patch('/subscriptions/me', {
      body: { plan: 'premium' },
    });
    expectErrorBody(res, 403);
    const wrong = await apiClient({ token: team.adminToken }).patch('/subscriptions/me', {
      body: { plan: 'gold' } as never,
    });
    expect(expectErrorBody(wrong, 400).message).to.equal('body.plan must be one of free, basic, premium');
    expect((await apiClient({ token: team.adminToken }).get('/subscriptions/me')).body.plan).to.equal('free');
  });

  it("reports this period's file quota from file_usage, for the caller's company only", async () => {
    const team = await createTeam({ plan: 'free' });
    const other = await createTeam({ plan: 'basic' });
    const { knex } = testEnv();
    await knex('fileUsage').insert([
      { companyId: team.company.id, periodKey: periodKey(), filesUsed: 7 },
      { companyId: team.company.id, periodKey: '2001-01', filesUsed: 99 },
      { companyId: other.company.id, periodKey: periodKey(), filesUsed: 3 },
    ]);
    const mine = await apiClient({ token: team.employeeToken }).get('/subscriptions/me');
    const now = new Date();
    expect(mine.body).to.deep.include({
      plan: 'free',
      periodKey: periodKey(),
      filesUsed: 7,
      filesLimit: 10,
      periodStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
    });
    const theirs = await apiClient({ token: other.adminToken }).get('/subscriptions/me');
    expect(theirs.body).to.deep.include({ plan: 'basic', filesUsed: 3, filesLimit: 200 });
  });
});
