/**
 * Issue 16: the running bill, invoices, finalisation (domain, HTTP, Temporal), documents and suspension.
 * Periods are inputs: plan history is written with past times and a closed period is finalised; nothing
 * waits for a real month.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { PDFParse } from 'pdf-parse';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { Config } from '../../common/config';
import { computeBill } from '../../domain/billing/compute';
import { formatCents } from '../../domain/billing/document';
import { finalizeChunk, finalizePeriodHere } from '../../domain/billing/finalize';
import { currentBill } from '../../domain/billing/queries';
import { setCompanyStatus } from '../../domain/billing/companyStatus';
import { actingAs } from '../../db/unitOfWork';
import type { PlanName } from '../../domain/plans/plans';
import { ensureBillingSchedule } from '../../worker/worker';
import { BILLING_PERIOD_WORKFLOW, billingPeriodWorkflowId } from '../../workflows/definitions/billing';
import { workflowIdentity, SYSTEM_COMPANY } from '../../workflows/shared';
import { ROOT, startWorker, testEnv } from '../helpers/env';
import { createApiKey, createCompany, createTeam, type TestCompany } from '../helpers/factories';
import { call, expectErrorBody } from '../helpers/http';
import { connectMcp, toolErrorOf } from '../helpers/mcp';
import { eventually } from '../helpers/temporal';
import {
  finishedDeliveries,
  insertEndpoint,
  startReceiver,
  startWebhookWorker,
  stopOtherDispatchers,
  webhookTestConfig,
} from '../helpers/webhooks';

async function history(companyId: string, changes: Array<[PlanName | null, string]>): Promise<void> {
  await testEnv()
    .knex('planChanges')
    .insert(changes.map(([plan, at]) => ({ companyId, plan, effectiveAt: new Date(at) })));
}

async function usage(companyId: string, periodKey: string, filesUsed: number): Promise<void> {
  await testEnv().knex('fileUsage').insert({ companyId, periodKey, filesUsed });
}

function billingDeps() {
  const { appKnex, storage, logger } = testEnv();
  return { knex: appKnex, storage, logger };
}

async function invoicesOf(companyId: string, periodKey?: string) {
  const q = testEnv().knex('invoices').where({ companyId });
  if (periodKey) void q.where({ periodKey });
  return (await q.orderBy('sequence')) as Array<Record<string, any>>;
}

async function duplicates(periodKey: string): Promise<unknown[]> {
  return testEnv()
    .knex('invoices')
    .select('companyId')
    .count({ n: '*' })
    .where({ periodKey })
    .groupBy('companyId')
    .havingRaw('count(*) > 1');
}

/** Runs an operator command (dist/scripts/<name>.js) against this run's database; its JSON output. */
function operator(name: string, args: string[]): Record<string, unknown> {
  const { config } = testEnv();
  const out = spawnSync(process.execPath, [path.join(ROOT, `dist/scripts/${name}.js`), ...args], {
    env: {
      ...process.env,
      DATABASE_URL: config.databaseUrl,
      S3_PREFIX: config.s3.prefix,
      LOG_LEVEL: 'silent',
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (out.status !== 0) throw new Error(`${name} exited ${out.status}: ${out.stderr}`);
  return JSON.parse(out.stdout.trim()) as Record<string, unknown>;
}

function queueConfig(suffix: string): Config {
  const { config } = testEnv();
  return { ...config, temporal: { ...config.temporal, taskQueue: `${config.temporal.taskQueue}-${suffix}` } };
}

/** A running bill without what moves with the clock (as-of time, elapsed seconds, amounts so far). */
function timeless(bill: any) {
  return {
    periodKey: bill.periodKey,
    periodStart: bill.periodStart,
    periodEnd: bill.periodEnd,
    currency: bill.currency,
    filesUsed: bill.filesUsed,
    segments: bill.segments.map((x: any) => ({ plan: x.plan, start: x.start })),
    lines: bill.lines.map((l: any) => ({ kind: l.kind, plan: l.plan, unitCents: l.unitCents })),
  };
}

describe('billing: proration (computed by hand)', () => {
  it('a mid-period upgrade and downgrade are prorated by the second; no refund, no excess on the final Basic', () => {
    // September 2026: 30 days = 2 592 000 s
    const bill = computeBill({
      periodKey: '2026-09',
      history: [
        { plan: 'basic', effectiveAt: new Date('2026-08-15T10:00:00Z') },
        { plan: 'premium', effectiveAt: new Date('2026-09-10T12:00:00Z') },
        { plan: 'basic', effectiveAt: new Date('2026-09-20T06:30:00Z') },
      ],
      filesUsed: 2100,
      asOf: new Date('2026-10-01T00:00:00Z'),
    });
    // basic  09-01 00:00 → 09-10 12:00 = 820 800 s: floor(4900 × 820800 / 2592000) = floor(1551.67) = 1551
    // premium 09-10 12:00 → 09-20 06:30 = 844 200 s: floor(19900 × 844200 / 2592000) = floor(6481.32) = 6481
    // basic  09-20 06:30 → 10-01 00:00 = 927 000 s: floor(4900 × 927000 / 2592000) = floor(1752.43) = 1752
    expect(
      bill.lines.map((l) => [l.kind, l.plan, l.kind === 'plan' ? l.seconds : 0, l.amountCents]),
    ).to.deep.equal([
      ['plan', 'basic', 820800, 1551],
      ['plan', 'premium', 844200, 6481],
      ['plan', 'basic', 927000, 1752],
    ]);
    expect(bill.totalCents).to.equal(1551 + 6481 + 1752);
    expect(bill.subtotalCents).to.equal(9784);
    expect(bill.currency).to.equal('USD');
  });

  it('a whole period on Premium costs the monthly price; files over quota are billed at 5 cents', () => {
    const bill = computeBill({
      periodKey: '2026-09',
      history: [{ plan: 'premium', effectiveAt: new Date('2026-01-01T00:00:00Z') }],
      filesUsed: 2010,
      asOf: new Date('2026-10-05T00:00:00Z'),
    });
    expect(bill.lines.map((l) => [l.kind, l.quantity, l.amountCents])).to.deep.equal([
      ['plan', 1, 19900],
      ['excess_files', 10, 50],
    ]);
    expect(bill.totalCents).to.equal(19950);
  });

  it('no plan before a change: only the time on a plan is billed', () => {
    const bill = computeBill({
      periodKey: '2026-09',
      history: [{ plan: 'basic', effectiveAt: new Date('2026-09-16T00:00:00Z') }],
      filesUsed: 0,
      asOf: new Date('2026-10-01T00:00:00Z'),
    });
    expect(bill.segments.map((s) => [s.plan, s.seconds])).to.deep.equal([
      [null, 15 * 86400],
      ['basic', 15 * 86400],
    ]);
    expect(bill.totalCents).to.equal(2450);
  });
});

describe('billing: the plan history', () => {
  it('records changes in the order they were applied, whenever their transactions began', async () => {
    const { knex } = testEnv();
    const company = await createCompany({ plan: 'free' });
    // A begins first, B changes the plan and commits, then A changes it after B (it takes the row lock later)
    const a = await knex.transaction();
    try {
      await a.raw('select 1');
      await new Promise((r) => setTimeout(r, 20));
      await knex('companies').where({ id: company.id }).update({ plan: 'basic' });
      await a('companies').where({ id: company.id }).update({ plan: 'premium' });
      await a.commit();
    } catch (err) {
      await a.rollback();
      throw err;
    }
    const rows = (await knex('planChanges')
      .where({ companyId: company.id })
      .orderBy([{ column: 'effectiveAt' }, { column: 'id' }])) as Array<{ plan: string }>;
    expect(rows.map((r) => r.plan)).to.deep.equal(['free', 'basic', 'premium']);
    expect((await knex('companies').where({ id: company.id }).first()).plan).to.equal('premium');
  });
});

describe('billing: running bill, invoices, documents (HTTP)', function () {
  this.timeout(60_000);

  it('the running bill at the period end equals the invoice; numbers run on; a re-run issues nothing', async () => {
    const team = await createTeam({ plan: null });
    const other = await createTeam({ plan: null });
    const cid = team.company.id;
    await history(cid, [
      ['premium', '2025-02-20T00:00:00Z'],
      ['basic', '2025-03-11T08:00:00Z'],
      ['premium', '2025-03-25T00:00:00Z'],
    ]);
    await usage(cid, '2025-03', 2050);
    await history(other.company.id, [['basic', '2025-01-01T00:00:00Z']]);

    const running = await actingAs({ companyId: cid }, () =>
      currentBill(testEnv().appKnex, { companyId: cid }, new Date('2025-04-01T00:00:00Z'), '2025-03'),
    );
    const first = await finalizePeriodHere(billingDeps(), { periodKey: '2025-03' });
    expect(first.invoicesCreated).to.be.at.least(2);

    const list = await call('GET', '/invoices', { token: team.adminToken });
    expect(list.status, list.text).to.equal(200);
    expect(list.body.meta).to.deep.equal({ page: 1, limit: 20, total: 1, totalPages: 1 });
    const invoice = list.body.data[0];
    expect(invoice.number).to.equal('2025-000001');
    expect(invoice.status).to.equal('finalized');
    expect(invoice.periodStart).to.equal('2025-03-01T00:00:00.000Z');
    expect(invoice.periodEnd).to.equal('2025-04-01T00:00:00.000Z');
    expect(invoice.lines).to.deep.equal(JSON.parse(JSON.stringify(running.lines)));
    expect(invoice.totalCents).to.equal(running.totalCents);
    // by hand: March 2025 = 2 678 400 s; premium 10 d 8 h = 892 800 s,
    // basic 13 d 16 h = 1 180 800 s, premium 7 d = 604 800 s; excess 50 × 5
    expect(invoice.lines.map((l: any) => l.amountCents)).to.deep.equal([
      Math.floor((19900 * 892800) / 2678400),
      Math.floor((4900 * 1180800) / 2678400),
      Math.floor((19900 * 604800) / 2678400),
      250,
    ]);

    const one = await call('GET', `/invoices/${invoice.id}`, { token: team.adminToken });
    expect(one.status).to.equal(200);
    expect(one.body).to.deep.equal(invoice);

    // another company's invoice is not found; its own list holds only its own
    expect(
      expectErrorBody(await call('GET', `/invoices/${invoice.id}`, { token: other.adminToken }), 404).message,
    ).to.equal('invoice not found');
    const otherList = await call('GET', '/invoices', { token: other.adminToken });
    expect(otherList.body.data.map((i: any) => i.number)).to.deep.equal(['2025-000001']);
    expect(otherList.body.data[0].id).to.not.equal(invoice.id);

    // the document: a short-lived link to a PDF with the number and the total
    const link = await call('GET', `/invoices/${invoice.id}/document`, { token: team.adminToken });
    expect(link.status, link.text).to.equal(200);
    const pdf = await fetch(link.body.url as string);
    expect(pdf.status).to.equal(200);
    const parser = new PDFParse({ data: new Uint8Array(await pdf.arrayBuffer()) });
    const text = (await parser.getText()).text;
    await parser.destroy();
    expect(text).to.include('2025-000001');
    expect(text).to.include(formatCents(invoice.totalCents as number, 'USD'));
    expectErrorBody(await call('GET', `/invoices/${invoice.id}/document`, { token: other.adminToken }), 404);

    // the period again: nothing new
    const again = await finalizePeriodHere(billingDeps(), { periodKey: '2025-03' });
    expect(again.invoicesCreated).to.equal(0);
    expect(await invoicesOf(cid)).to.have.length(1);
    expect(await duplicates('2025-03')).to.deep.equal([]);

    // an operator voids it: the number stays, the state changes, audited
    expect(operator('invoice-void', [invoice.id, '--reason', 'test'])).to.deep.include({
      to: 'void',
      changed: true,
    });
    expect((await call('GET', `/invoices/${invoice.id}`, { token: team.adminToken })).body.status).to.equal(
      'void',
    );
    expect(
      await testEnv().knex('auditLog').where({ companyId: cid, action: 'invoice.voided' }),
    ).to.have.length(1);

    // the next period gets the next number; the list is newest first
    await finalizePeriodHere(billingDeps(), { periodKey: '2025-04' });
    const after = await call('GET', '/invoices?limit=1&page=1', { token: team.adminToken });
    expect(after.body.meta).to.deep.equal({ page: 1, limit: 1, total: 2, totalPages: 2 });
    expect(after.body.data[0].number).to.equal('2025-000002');
    expect(after.body.data[0].periodKey).to.equal('2025-04');
    expect(after.body.data[0].totalCents).to.equal(19900);
  });

  it('the billing tools of the AI-agent endpoint answer as the REST routes (billing:read keys only)', async () => {
    const team = await createTeam({ plan: null });
    const other = await createTeam({ plan: null });
    const cid = team.company.id;
    await history(cid, [['basic', '2025-05-01T00:00:00Z']]);
    await finalizePeriodHere(billingDeps(), { periodKey: '2025-05' });
    const key = await createApiKey(team.admin, ['mcp', 'billing:read']);
    const get = async (path: string) => {
      const res = await call('GET', path, { token: key });
      expect(res.status, res.text).to.equal(200);
      return res.body;
    };
    const mcp = await connectMcp(key);
    const run = async (name: string, args: Record<string, unknown> = {}) => {
      const result = await mcp.client.callTool({ name, arguments: args });
      return { error: result.isError ? toolErrorOf(result) : null, body: result.structuredContent as any };
    };
    try {
      const invoices = await run('list_invoices');
      expect(invoices.body).to.deep.equal(await get('/invoices'));
      expect(invoices.body.data).to.have.length(1);
      const id = invoices.body.data[0].id as string;
      expect((await run('get_invoice', { id })).body).to.deep.equal(await get(`/invoices/${id}`));
      const bill = (await run('get_running_bill')).body;
      const restBill = await get('/billing/current');
      // the two answers are computed a moment apart: the same bill but for the seconds elapsed in between
      expect(timeless(bill)).to.deep.equal(timeless(restBill));
      expect(Math.abs(bill.totalCents - restBill.totalCents)).to.be.at.most(1);
      const link = (await run('get_invoice_document_link', { id })).body;
      expect((await fetch(link.url as string)).status).to.equal(200);
      // another company's invoice: not found, as in REST
      const theirs = (await call('GET', '/invoices', { token: other.adminToken })).body.data as unknown[];
      expect(theirs).to.deep.equal([]);
      const missing = await run('get_invoice', { id: '00000000-0000-4000-8000-000000000000' });
      expect(missing.error).to.deep.include({ statusCode: 404 });
    } finally {
      await mcp.close();
    }
    // a key without billing:read is not offered the tools and is refused with REST's 403
    const reader = await connectMcp(await createApiKey(team.admin, ['mcp', 'files:read']));
    try {
      const names = (await reader.client.listTools()).tools.map((t) => t.name);
      expect(names.filter((n) => /bill|invoice/.test(n))).to.deep.equal([]);
      const refused = toolErrorOf(await reader.client.callTool({ name: 'list_invoices', arguments: {} }));
      expect(refused.statusCode).to.equal(403);
    } finally {
      await reader.close();
    }
  });

  it('GraphQL: the running bill and the invoices (a connection) for admins, as REST answers; employees refused', async () => {
    const team = await createTeam({ plan: null });
    const other = await createTeam({ plan: null });
    const cid = team.company.id;
    await history(cid, [['basic', '2025-05-01T00:00:00Z']]);
    await history(other.company.id, [['premium', '2025-05-01T00:00:00Z']]);
    await finalizePeriodHere(billingDeps(), { periodKey: '2025-05' });
    await finalizePeriodHere(billingDeps(), { periodKey: '2025-06' });
    const query = `query($after: String) {
      runningBill { periodKey totalCents currency lines { kind plan amountCents } segments { plan seconds } }
      invoices(first: 1, after: $after) {
        nodes { id number status periodKey totalCents lines { kind amountCents unitCents quantity } issuedAt }
        pageInfo { hasNextPage endCursor }
      }
    }`;
    const gql = (token: string, variables: Record<string, unknown> = {}) =>
      call('POST', '/graphql', { token, json: { query, variables } });
    const first = await gql(team.adminToken);
    expect(first.status, first.text).to.equal(200);
    expect(first.body.errors, first.text).to.equal(undefined);
    const rest = (await call('GET', '/invoices', { token: team.adminToken })).body.data as any[];
    expect(rest.map((i) => i.number)).to.deep.equal(['2025-000002', '2025-000001']);
    const pick = (i: any) => ({
      id: i.id,
      number: i.number,
      status: i.status,
      periodKey: i.periodKey,
      totalCents: i.totalCents,
      issuedAt: i.issuedAt,
      lines: i.lines.map((l: any) => ({
        kind: l.kind,
        amountCents: l.amountCents,
        unitCents: l.unitCents,
        quantity: l.quantity,
      })),
    });
    expect(first.body.data.invoices.nodes).to.deep.equal([pick(rest[0])]);
    expect(first.body.data.invoices.pageInfo.hasNextPage).to.equal(true);
    const second = await gql(team.adminToken, { after: first.body.data.invoices.pageInfo.endCursor });
    expect(second.body.data.invoices.nodes).to.deep.equal([pick(rest[1])]);
    expect(second.body.data.invoices.pageInfo).to.deep.equal({ hasNextPage: false, endCursor: null });
    const bill = (await call('GET', '/billing/current', { token: team.adminToken })).body;
    expect(first.body.data.runningBill).to.deep.include({
      periodKey: bill.periodKey,
      currency: bill.currency,
    });
    // computed a moment apart: equal but for the seconds elapsed in between
    expect(Math.abs(first.body.data.runningBill.totalCents - bill.totalCents)).to.be.at.most(1);
    // another company's admin sees only its own invoices; its cursor does not open this company's list
    const theirs = await gql(other.adminToken);
    expect(theirs.body.data.invoices.nodes.map((i: any) => i.id)).to.not.include.members(
      rest.map((i) => i.id),
    );
    const foreignCursor = await gql(other.adminToken, { after: first.body.data.invoices.pageInfo.endCursor });
    expect(foreignCursor.body.errors?.[0]?.message).to.match(/cursor/);
    // an employee: both fields refused (FORBIDDEN), nothing of the bill shown — and only these fields: what the
    // employee may read in the same query is answered
    const employee = await gql(team.employeeToken);
    expect(employee.body.data).to.deep.equal({ runningBill: null, invoices: null });
    expect(
      employee.body.errors.map((e: any) => [e.path.join('.'), e.message, e.extensions.code]).sort(),
    ).to.deep.equal([
      ['invoices', 'your role does not allow this', 'FORBIDDEN'],
      ['runningBill', 'your role does not allow this', 'FORBIDDEN'],
    ]);
    const mixed = await call('POST', '/graphql', {
      token: team.employeeToken,
      json: { query: '{ me { id } runningBill { totalCents } }' },
    });
    expect(mixed.body.data).to.deep.equal({ me: { id: team.employee.id }, runningBill: null });
    expect(mixed.body.errors.map((e: any) => e.path)).to.deep.equal([['runningBill']]);
  });

  it('the admins get an invoice.finalized notification once per invoice (employees none)', async () => {
    const team = await createTeam({ plan: null });
    await history(team.company.id, [['basic', '2025-07-01T00:00:00Z']]);
    await finalizePeriodHere(billingDeps(), { periodKey: '2025-07' });
    await finalizePeriodHere(billingDeps(), { periodKey: '2025-07' });
    const [invoice] = await invoicesOf(team.company.id, '2025-07');
    const kinds = async (token: string) =>
      ((await call('GET', '/notifications', { token })).body.data as any[]).filter(
        (n) => n.kind === 'invoice.finalized',
      );
    const admin = await kinds(team.adminToken);
    expect(admin).to.have.length(1);
    expect(admin[0].data).to.deep.include({ invoiceId: invoice.id, totalCents: Number(invoice.totalCents) });
    expect(await kinds(team.employeeToken)).to.deep.equal([]);
  });

  it('a void invoice is replaced by the next run: a new number, one finalized invoice for the period; then nothing', async () => {
    const team = await createTeam({ plan: null });
    const cid = team.company.id;
    await history(cid, [['basic', '2025-09-01T00:00:00Z']]);
    await finalizePeriodHere(billingDeps(), { periodKey: '2025-09' });
    const [first] = await invoicesOf(cid, '2025-09');
    expect(first.number).to.equal('2025-000001');
    expect(operator('invoice-void', [first.id, '--reason', 'issued in error'])).to.deep.include({
      changed: true,
    });

    // the operator re-runs the period: a replacement under the next number; the void one keeps its own
    expect(operator('billing-finalize', ['--period', '2025-09', '--direct'])).to.deep.include({
      invoicesCreated: 1,
    });
    const rows = await invoicesOf(cid, '2025-09');
    expect(rows.map((r) => [r.number, r.status])).to.deep.equal([
      ['2025-000001', 'void'],
      ['2025-000002', 'finalized'],
    ]);
    const second = rows[1];
    expect(Number(second.totalCents)).to.equal(4900);
    // its own event and its own notification to the admins
    const events = (await testEnv()
      .knex('outbox')
      .where({ companyId: cid, type: 'invoice.finalized' })
      .orderBy('createdAt')) as Array<{ data: { invoiceId: string; number: string } }>;
    expect(events.map((e) => [e.data.invoiceId, e.data.number])).to.deep.equal([
      [first.id, '2025-000001'],
      [second.id, '2025-000002'],
    ]);
    const notified = ((await call('GET', '/notifications', { token: team.adminToken })).body.data as any[])
      .filter((n) => n.kind === 'invoice.finalized')
      .map((n) => n.data.invoiceId as string);
    expect(notified).to.have.members([first.id, second.id]);

    // a third run issues nothing; the database refuses a second invoice of the period that is not void
    const third = await finalizePeriodHere(billingDeps(), { periodKey: '2025-09' });
    expect(third.invoicesCreated).to.equal(0);
    expect(await invoicesOf(cid, '2025-09')).to.have.length(2);
    const { id: _id, sequence: _sequence, number: _number, ...copy } = second;
    const duplicate = await testEnv()
      .knex('invoices')
      .insert({
        ...copy,
        id: randomUUID(),
        sequence: 3,
        number: '2025-000003',
        lines: JSON.stringify(copy.lines),
        segments: JSON.stringify(copy.segments),
      })
      .then(
        () => null,
        (err: { constraint?: string }) => err.constraint,
      );
    expect(duplicate).to.equal('invoices_company_period_not_void');

    // listed newest first, the replacement before the void one, in REST and through GraphQL's cursor
    const listed = (await call('GET', '/invoices', { token: team.adminToken })).body.data as any[];
    expect(listed.map((i) => i.number)).to.deep.equal(['2025-000002', '2025-000001']);
    const gql = (after?: string) =>
      call('POST', '/graphql', {
        token: team.adminToken,
        json: {
          query: `query($after: String) { invoices(first: 1, after: $after) {
            nodes { number } pageInfo { hasNextPage endCursor } } }`,
          variables: { after },
        },
      });
    const page1 = (await gql()).body.data.invoices;
    const page2 = (await gql(page1.pageInfo.endCursor as string)).body.data.invoices;
    expect([...page1.nodes, ...page2.nodes].map((n: any) => n.number)).to.deep.equal([
      '2025-000002',
      '2025-000001',
    ]);
    expect(page2.pageInfo.hasNextPage).to.equal(false);
  });

  it('who is invoiced: never the demo company, not Free with a zero total, not a company without a plan in the period', async () => {
    const { knex } = testEnv();
    // the run's demo company if a demo test made it, else one made here and unmarked at the end (it has no
    // sample data, and later demo tests must make their own)
    let demo = (await knex('companies').where({ isDemo: true }).first()) as { id: string } | undefined;
    let madeHere = false;
    if (!demo) {
      demo = await createCompany({ plan: null });
      await knex('companies').where({ id: demo.id }).update({ isDemo: true });
      madeHere = true;
    }
    try {
      const free = await createCompany({ plan: null });
      const late = await createCompany({ plan: null });
      const paid = await createCompany({ plan: null });
      await history(demo.id, [['premium', '2024-12-01T00:00:00Z']]);
      await history(free.id, [['free', '2024-12-01T00:00:00Z']]);
      await usage(free.id, '2025-01', 10);
      await history(late.id, [['premium', '2025-02-01T00:00:00Z']]);
      await history(paid.id, [['premium', '2025-01-31T23:59:00Z']]);
      const result = await finalizePeriodHere(billingDeps(), { periodKey: '2025-01' });
      expect(result.notBillable).to.be.at.least(1);
      expect(await invoicesOf(demo.id, '2025-01')).to.have.length(0);
      expect(await invoicesOf(free.id, '2025-01')).to.have.length(0);
      expect(await invoicesOf(late.id, '2025-01')).to.have.length(0);
      // 60 s of 2 678 400 on Premium: floor(19900 × 60 / 2678400) = 0 cents: no invoice either
      expect(await invoicesOf(paid.id, '2025-01')).to.have.length(0);
      await finalizePeriodHere(billingDeps(), { periodKey: '2025-02' });
      // February 2025 on Premium: the demo company still gets none
      expect((await invoicesOf(paid.id, '2025-02')).map((r) => Number(r.totalCents))).to.deep.equal([19900]);
      expect(await invoicesOf(demo.id, '2025-02')).to.have.length(0);
      expect((await invoicesOf(late.id, '2025-02')).map((r) => r.number)).to.deep.equal(['2025-000001']);
    } finally {
      if (madeHere) await knex('companies').where({ id: demo.id }).update({ isDemo: false });
    }
  });

  it('billing:read: admins and keys holding it; employees and keys without it are refused', async () => {
    const team = await createTeam({ plan: 'premium' });
    const current = await call('GET', '/billing/current', { token: team.adminToken });
    expect(current.status, current.text).to.equal(200);
    expect(current.body.currency).to.equal('USD');
    // the plan was chosen at the company's creation (a moment ago): before it, no plan
    expect(current.body.segments.at(-1).end).to.equal(current.body.asOf.replace(/\.\d+Z$/, '.000Z'));
    // the same computation from the recorded history and usage, as of the bill's own time
    const again = await actingAs({ companyId: team.company.id }, () =>
      currentBill(testEnv().appKnex, { companyId: team.company.id }, new Date(current.body.asOf as string)),
    );
    expect(current.body.totalCents).to.equal(again.totalCents);

    const keyWith = await createApiKey(team.admin, ['billing:read']);
    const keyWithout = await createApiKey(team.admin, ['files:read']);
    for (const path of ['/billing/current', '/invoices']) {
      expect((await call('GET', path, { token: keyWith })).status).to.equal(200);
      expect(expectErrorBody(await call('GET', path, { token: keyWithout }), 403).message).to.equal(
        'the API key lacks the scope billing:read',
      );
      expectErrorBody(await call('GET', path, { token: team.employeeToken }), 403);
      expectErrorBody(await call('GET', path), 401);
    }
  });
});

describe('billing: suspension', function () {
  this.timeout(30_000);

  it('refuses the next request of a session and of a key, and sign-in; audited; reactivation restores', async () => {
    const team = await createTeam({ plan: 'free' });
    const key = await createApiKey(team.admin, ['files:read']);
    expect((await call('GET', '/subscriptions/me', { token: team.adminToken })).status).to.equal(200);
    expect((await call('GET', '/subscriptions/me', { token: key })).status).to.equal(200);

    expect(
      operator('company-status', [team.company.id, '--suspend', '--reason', 'unpaid', '--operator', 'test']),
    ).to.deep.equal({ companyId: team.company.id, from: 'active', to: 'suspended', changed: true });
    for (const token of [team.adminToken, key]) {
      expect(expectErrorBody(await call('GET', '/subscriptions/me', { token }), 403).message).to.equal(
        'the company is suspended',
      );
    }
    const login = await call('POST', '/auth/login', {
      json: { email: team.admin.email, password: team.admin.password },
    });
    expect(expectErrorBody(login, 403).message).to.equal('the company is not active');
    const audit = await testEnv()
      .knex('auditLog')
      .where({ companyId: team.company.id, action: 'company.suspended' });
    expect(audit).to.have.length(1);
    expect(audit[0].details).to.deep.include({ reason: 'unpaid', from: 'active', to: 'suspended' });

    await testEnv().knex.transaction((trx) =>
      setCompanyStatus(trx, { companyId: team.company.id, status: 'active', reason: 'paid' }),
    );
    expect((await call('GET', '/subscriptions/me', { token: key })).status).to.equal(200);
    expect((await call('GET', '/subscriptions/me', { token: team.adminToken })).status).to.equal(200);
  });
});

describe('billing: the chunk lock', function () {
  this.timeout(60_000);

  it('does not block inserts that reference its companies, and still serialises two runs of the same chunk', async () => {
    const { knex } = testEnv();
    const company = await createCompany({ plan: null });
    await history(company.id, [['basic', '2025-10-01T00:00:00Z']]);
    // a chunk of this company alone: (the greatest company id below it, its id]
    const below = (await knex('companies')
      .select('id')
      .where('id', '<', company.id)
      .orderBy('id', 'desc')
      .first()) as { id: string } | undefined;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let paused!: () => void;
    const isPaused = new Promise<void>((resolve) => (paused = resolve));
    const chunk = { periodKey: '2025-10', afterId: below?.id ?? null, throughId: company.id };
    // the first run holds its lock (computed, not yet committed) until released
    const first = finalizeChunk(billingDeps(), {
      ...chunk,
      hook: async () => {
        paused();
        await released;
      },
    });
    try {
      await isPaused;
      // a row referencing the company (a foreign key check takes FOR KEY SHARE) goes in meanwhile
      await knex.transaction(async (trx) => {
        await trx.raw(`set local lock_timeout = '2s'`);
        await trx('fileUsage').insert({ companyId: company.id, periodKey: '2025-11', filesUsed: 1 });
      });
      // a second run of the same chunk waits for the first and finds its invoice
      const second = finalizeChunk(billingDeps(), chunk);
      release();
      expect((await first).created).to.have.length(1);
      expect(await second).to.deep.include({ alreadyInvoiced: 1, created: [] });
    } finally {
      release();
      await first.catch(() => undefined);
    }
    expect(await invoicesOf(company.id, '2025-10')).to.have.length(1);
  });
});

describe('billing: finalisation on Temporal', function () {
  this.timeout(180_000);

  async function companiesOn(plan: PlanName, since: string, count: number): Promise<TestCompany[]> {
    const out: TestCompany[] = [];
    for (let i = 0; i < count; i++) {
      const c = await createCompany({ plan: null });
      await history(c.id, [[plan, since]]);
      out.push(c);
    }
    return out;
  }

  it('the Schedule triggered twice and an operator re-run give one invoice per company', async () => {
    const config = queueConfig('billing-schedule');
    const worker = await startWorker({ config });
    const { temporal } = testEnv();
    const companies = await companiesOn('basic', '2026-09-03T00:00:00Z', 3);
    const scheduleId = await ensureBillingSchedule(temporal, config);
    const schedule = temporal.schedule.getHandle(scheduleId);
    try {
      // a firing missed while Temporal was down is taken when it returns, up to 7 days late (README "Billing")
      const described = await schedule.describe();
      expect(described.policies.catchupWindow).to.equal(7 * 24 * 3600 * 1000);
      expect(described.spec.calendars?.[0]).to.deep.include({ hour: [{ start: 0, end: 0, step: 1 }] });
      const runOnce = async (n: number) => {
        await schedule.trigger();
        const actions = await eventually(
          async () => {
            const d = await schedule.describe();
            return d.info.recentActions.length >= n ? d.info.recentActions : undefined;
          },
          { what: `schedule action ${n}` },
        );
        const started = actions[n - 1].action;
        return temporal.workflow.getHandle(started.workflow.workflowId).result();
      };
      const first = await runOnce(1);
      expect(first).to.deep.include({ periodKey: '2026-10' });
      const second = await runOnce(2);
      expect(second).to.deep.include({ periodKey: '2026-10', invoicesCreated: 0 });

      // an operator re-runs the period through its workflow id, then with the command in this process
      const identity = workflowIdentity({
        kind: 'billing',
        parts: ['2026-10', config.temporal.taskQueue],
        companyId: SYSTEM_COMPANY,
        taskQueue: config.temporal.taskQueue,
      });
      const handle = await temporal.workflow.start(BILLING_PERIOD_WORKFLOW, {
        ...identity,
        args: [{ periodKey: '2026-10', trigger: 'operator' }],
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      });
      expect(await handle.result()).to.deep.include({ invoicesCreated: 0 });
      expect(operator('billing-finalize', ['--period', '2026-10', '--direct'])).to.deep.include({
        periodKey: '2026-10',
        invoicesCreated: 0,
      });

      // on Basic since September: the whole of October
      for (const c of companies) {
        const rows = await invoicesOf(c.id, '2026-10');
        expect(rows).to.have.length(1);
        expect(Number(rows[0].totalCents)).to.equal(4900);
        expect(rows[0].workflowId).to.equal(billingPeriodWorkflowId('2026-10', config.temporal.taskQueue));
        expect(rows[0].documentKey).to.be.a('string');
      }
      expect(await duplicates('2026-10')).to.deep.equal([]);
    } finally {
      await schedule.delete().catch(() => undefined);
      await worker.stop();
    }
  });

  it('a worker killed in the middle of a period: another finishes it with exactly one invoice per company', async () => {
    const config = queueConfig('billing-kill');
    const companies = await companiesOn('premium', '2026-07-10T00:00:00Z', 6);
    let computed = 0;
    let killed = false;
    let stopping: Promise<void> | undefined;
    const a = await startWorker({
      config,
      billingChunkHook: () => {
        computed += 1;
        if (computed === 3) {
          killed = true;
          stopping = a.stop();
          throw new Error('worker killed (test)');
        }
      },
    });
    const { temporal } = testEnv();
    const handle = await temporal.workflow.start(BILLING_PERIOD_WORKFLOW, {
      ...workflowIdentity({
        kind: 'billing',
        parts: ['2026-08', config.temporal.taskQueue],
        companyId: SYSTEM_COMPANY,
        taskQueue: config.temporal.taskQueue,
      }),
      args: [{ periodKey: '2026-08', trigger: 'test', chunkSize: 2, concurrency: 1 }],
    });
    await eventually(async () => killed, { what: 'the worker killed mid-run' });
    await stopping;
    const partial = (await testEnv().knex('invoices').where({ periodKey: '2026-08' })) as unknown[];
    expect(partial.length, 'the first chunk committed, the second did not').to.be.at.least(1);
    const b = await startWorker({ config });
    try {
      const result = await handle.result();
      expect(result.periodKey).to.equal('2026-08');
    } finally {
      await b.stop();
    }
    for (const c of companies) {
      const rows = await invoicesOf(c.id, '2026-08');
      expect(rows, c.id).to.have.length(1);
      // on Premium since July: the whole of August
      expect(Number(rows[0].totalCents)).to.equal(19900);
    }
    expect(await duplicates('2026-08')).to.deep.equal([]);
  });
});

describe('billing: invoice.finalized to a webhook receiver', function () {
  this.timeout(180_000);

  before(async () => {
    await stopOtherDispatchers();
  });

  it('reaches the receiver once; a suspended company’s event is held until it is reactivated', async () => {
    const config = webhookTestConfig('billing-events');
    const running = await startWebhookWorker(config);
    try {
      const a = await createCompany({ plan: null });
      const b = await createCompany({ plan: null });
      await history(a.id, [['basic', '2026-06-01T00:00:00Z']]);
      await history(b.id, [['basic', '2026-06-01T00:00:00Z']]);
      const receiver = await startReceiver();
      const ea = await insertEndpoint(config, a.id, { url: receiver.url, events: ['invoice.finalized'] });
      const eb = await insertEndpoint(config, b.id, { url: receiver.url, events: ['invoice.finalized'] });
      receiver.secrets = [ea.secret, eb.secret];
      await testEnv().knex.transaction((trx) =>
        setCompanyStatus(trx, { companyId: b.id, status: 'suspended', reason: 'test' }),
      );

      await finalizePeriodHere(billingDeps(), { periodKey: '2026-07' });
      const [invoiceA] = await invoicesOf(a.id, '2026-07');
      const [invoiceB] = await invoicesOf(b.id, '2026-07');
      expect(invoiceB, 'a suspended company is still invoiced').to.not.equal(undefined);
      await finishedDeliveries(ea.endpoint.id, 1);
      const forA = receiver.requests.filter((r) => r.body?.data?.invoiceId === invoiceA.id);
      expect(forA).to.have.length(1);
      expect(forA[0].verifiedWith).to.equal(0);
      expect(forA[0].body).to.deep.include({ type: 'invoice.finalized', companyId: a.id });
      expect(forA[0].body.data).to.deep.include({
        invoiceId: invoiceA.id,
        totalCents: 4900,
        periodStart: '2026-07-01T00:00:00.000Z',
        periodEnd: '2026-08-01T00:00:00.000Z',
      });
      // B's event, written in the same transaction, was passed over by the pass that sent A's
      const heldB = await testEnv().knex('outbox').where({ companyId: b.id, type: 'invoice.finalized' });
      expect(heldB).to.have.length(1);
      expect(heldB[0].dispatchedAt).to.equal(null);

      // a second run writes no second event
      await finalizePeriodHere(billingDeps(), { periodKey: '2026-07' });
      expect(
        await testEnv().knex('outbox').where({ companyId: a.id, type: 'invoice.finalized' }),
      ).to.have.length(1);

      await testEnv().knex.transaction((trx) =>
        setCompanyStatus(trx, { companyId: b.id, status: 'active', reason: 'test' }),
      );
      await finishedDeliveries(eb.endpoint.id, 1);
      expect(receiver.requests.filter((r) => r.body?.data?.invoiceId === invoiceB.id)).to.have.length(1);
      expect(receiver.requests.filter((r) => r.body?.data?.invoiceId === invoiceA.id)).to.have.length(1);
    } finally {
      await running.stop();
    }
  });
});
