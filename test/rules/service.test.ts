/**
 * Quality rules and sensitive data end to end: rules created over HTTP, files uploaded, reports built by a
 * real worker (real PostgreSQL, Temporal, MinIO), events delivered to a real receiver on loopback.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { NativeConnection } from '@temporalio/worker';
import { expect } from 'chai';
import pino from 'pino';
import { createApp } from '../../api/app';
import { createWorker, ensureOutboxDispatcher } from '../../worker/worker';
import { atEnd, testEnv, workflowBundle } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { call } from '../helpers/http';
import { uploadFile } from '../helpers/files';
import { eventually } from '../helpers/temporal';
import { startReceiver, stopOtherDispatchers, webhookTestConfig, type Receiver } from '../helpers/webhooks';

type Team = Awaited<ReturnType<typeof createTeam>>;

const EMAILS = ['anna.smith@example.com', 'li.chen@example.org', 'omar.khan@example.net'];
// rows 2..5 (header is row 1): row 3 has no email; ages 130 and "abc" break the range
const FILE = ['id,email,age', `1,${EMAILS[0]},34`, '2,,130', `3,${EMAILS[1]},41`, `4,${EMAILS[2]},abc`].join(
  '\n',
);

describe('quality rules and sensitive data in the report pass (end to end)', function () {
  this.timeout(180_000);
  const logLines: string[] = [];
  let baseUrl: string;
  let team: Team;
  let receiver: Receiver;
  let stopWorker: (() => Promise<void>) | undefined;

  before(async () => {
    await stopOtherDispatchers();
    const config = webhookTestConfig('rules-events');
    // worker and API log at debug level into memory: the test reads every line
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    const logger = pino({ level: 'debug' }, sink);
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    const worker = await createWorker({
      config,
      // the application role, as the real worker: the build acts under row-level security
      knex: testEnv().appKnex,
      logger,
      connection,
      workflowBundle: await workflowBundle(),
    });
    const running = worker.run();
    const dispatcherId = await ensureOutboxDispatcher(testEnv().temporal, config);
    const { temporal } = testEnv();
    // stopped when this file ends (not at the end of the run): a dispatcher left running would claim the
    // outbox rows of later tests
    stopWorker = async () => {
      await temporal.workflow
        .getHandle(dispatcherId)
        .terminate('test done')
        .catch(() => undefined);
      worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
    };
    atEnd(() => stopWorker?.() ?? Promise.resolve());
    const server = http.createServer(createApp({ ...testEnv().deps, config, logger }).callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    atEnd(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    team = await createTeam({ plan: 'premium' });
    receiver = await startReceiver();
    const endpoint = await call('POST', '/outgoing-webhooks', {
      baseUrl,
      token: team.adminToken,
      json: {
        name: 'quality',
        url: receiver.url,
        events: ['report.ready', 'rules.failed', 'file.sensitive_data_found'],
      },
    });
    expect(endpoint.status, endpoint.text).to.equal(201);
    receiver.secrets = [endpoint.body.secret];
    for (const json of [
      { name: 'email present', kind: 'not_null', column: 'email' },
      { name: 'age plausible', kind: 'range', column: 'age', params: { min: 0, max: 120 } },
      { name: 'only for another file', kind: 'not_null', column: 'id', fileIds: [] as string[] },
    ]) {
      const res = await call('POST', '/rules', { baseUrl, token: team.adminToken, json });
      expect(res.status, res.text).to.equal(201);
    }
  });

  after(async () => {
    const stop = stopWorker;
    stopWorker = undefined;
    await stop?.();
  });

  const received = (type: string, fileId: string) =>
    receiver.requests.filter((r) => r.body.type === type && r.body.data.fileId === fileId);

  async function outboxCount(type: string, fileId: string): Promise<number> {
    const rows = await testEnv()
      .knex('outbox')
      .where({ companyId: team.company.id, type })
      .whereRaw("data->>'fileId' = ?", [fileId]);
    return rows.length;
  }

  /** Waits until every event of the file in the outbox has reached the receiver. */
  async function allDelivered(fileId: string, types: string[]): Promise<void> {
    await eventually(
      async () => {
        for (const type of types) {
          const n = await outboxCount(type, fileId);
          if (n === 0 || received(type, fileId).length < n) return false;
        }
        return true;
      },
      { what: `${types.join(', ')} delivered`, timeoutMs: 90_000 },
    );
  }

  it('evaluates the rules and scores the file as worked out by hand; rules.failed and file.sensitive_data_found once', async () => {
    const up = await uploadFile(FILE, { token: team.adminToken, baseUrl, visibility: 'company' });
    expect(up.status, up.text).to.equal(201);
    const fileId = up.body.id as string;
    await allDelivered(fileId, ['report.ready', 'rules.failed', 'file.sensitive_data_found']);

    const report = await call('GET', `/files/${fileId}/versions/1/report`, {
      baseUrl,
      token: team.employeeToken,
    });
    expect(report.status, report.text).to.equal(200);
    expect(report.body.status).to.equal('ready');
    const quality = report.body.sections.quality;
    // company rules: not_null email 4 units, 1 fails (p 3/4); range age 4 non-null units, 130 and abc fail (1/2)
    // defaults: completeness id 1, email 3/4, age 1; validity id 1, email 1 (text), age 1 (3 of 4 integers
    //   is under 90%: text); duplicate rows 1; volume 1
    // completeness (3/4 + 1 + 3/4 + 1)/4 = 7/8; validity (1/2 + 1 + 1 + 1)/4 = 7/8; uniqueness 1; volume 1
    // score 100 × (7/8 + 7/8 + 1 + 1)/4 = 93.75
    expect(quality.score).to.equal(93.75);
    expect(quality.dimensions).to.deep.equal({
      completeness: 87.5,
      validity: 87.5,
      uniqueness: 100,
      volume: 100,
    });
    expect(quality).to.include({ rulesEvaluated: 10, rulesPassed: 7, unitsEvaluated: 33, unitsPassed: 29 });
    expect(
      quality.rules.map((r: any) => ({ name: r.name, status: r.status, failingRows: r.failingRows })),
    ).to.deep.equal([
      { name: 'email present', status: 'failed', failingRows: [3] },
      { name: 'age plausible', status: 'failed', failingRows: [3, 5] },
    ]);
    const sheet = report.body.sections.sensitiveData.columns[0].sheet;
    expect(report.body.sections.sensitiveData.columns).to.deep.equal([
      { sheet, column: 'email', kinds: [{ kind: 'email', share: 1 }] },
    ]);

    const [failed] = received('rules.failed', fileId);
    expect(failed.body.data).to.deep.equal({ fileId, failedRuleCount: 2, qualityScore: 93.75, version: 1 });
    const [found] = received('file.sensitive_data_found', fileId);
    expect(found.body.data).to.deep.equal({
      fileId,
      datasetId: up.body.datasetId,
      version: 1,
      columns: [{ name: 'email', sheet, kinds: ['email'] }],
    });
    expect(await outboxCount('rules.failed', fileId)).to.equal(1);
    expect(await outboxCount('file.sensitive_data_found', fileId)).to.equal(1);

    // no value of the flagged column anywhere: report, events, logs
    const everything = [
      report.text,
      ...receiver.requests.map((r) => JSON.stringify(r.body)),
      ...logLines,
    ].join('\n');
    for (const email of EMAILS) expect(everything).not.to.include(email);
    expect(logLines.length).to.be.greaterThan(0);

    // a rebuild is a new build: rules.failed again, the sensitive-data event not again (once per version)
    const rebuild = await call('POST', `/files/${fileId}/versions/1/report/rebuild`, {
      baseUrl,
      token: team.adminToken,
    });
    expect(rebuild.status, rebuild.text).to.equal(202);
    await eventually(async () => (await outboxCount('rules.failed', fileId)) === 2, {
      what: 'the rebuild saved',
      timeoutMs: 90_000,
    });
    await allDelivered(fileId, ['report.ready', 'rules.failed', 'file.sensitive_data_found']);
    expect(received('rules.failed', fileId)).to.have.length(2);
    expect(await outboxCount('file.sensitive_data_found', fileId)).to.equal(1);
  });

  it('never announces sensitive data of a private file; announces it once when the file is made company-visible', async () => {
    const up = await uploadFile(FILE, { token: team.adminToken, baseUrl, visibility: 'private' });
    expect(up.status, up.text).to.equal(201);
    const fileId = up.body.id as string;
    await allDelivered(fileId, ['report.ready', 'rules.failed']);
    expect(await outboxCount('file.sensitive_data_found', fileId)).to.equal(0);

    const open = await call('PATCH', `/files/${fileId}`, {
      baseUrl,
      token: team.adminToken,
      json: { visibility: 'company' },
    });
    expect(open.status, open.text).to.equal(200);
    await allDelivered(fileId, ['file.sensitive_data_found']);
    // private again and company again: nothing new for the same version
    for (const visibility of ['private', 'company']) {
      const res = await call('PATCH', `/files/${fileId}`, {
        baseUrl,
        token: team.adminToken,
        json: { visibility },
      });
      expect(res.status, res.text).to.equal(200);
    }
    expect(await outboxCount('file.sensitive_data_found', fileId)).to.equal(1);
    expect(received('file.sensitive_data_found', fileId)[0].body.data.version).to.equal(1);
  });

  it('no rules.failed when only warn rules fail or nothing fails', async () => {
    const t = await createTeam({ plan: 'premium' });
    const res = await call('POST', '/rules', {
      baseUrl,
      token: t.adminToken,
      json: { name: 'warn only', kind: 'not_null', column: 'email', severity: 'warn' },
    });
    expect(res.status, res.text).to.equal(201);
    const up = await uploadFile(FILE, { token: t.adminToken, baseUrl, visibility: 'company' });
    const fileId = up.body.id as string;
    await eventually(
      async () => {
        const r = await call('GET', `/files/${fileId}/report`, { baseUrl, token: t.adminToken });
        return r.body?.status === 'ready' ? r : undefined;
      },
      { what: 'report ready', timeoutMs: 90_000 },
    );
    const report = await call('GET', `/files/${fileId}/report`, { baseUrl, token: t.adminToken });
    expect(report.body.sections.quality.rules[0].status).to.equal('warn');
    expect(
      await testEnv().knex('outbox').where({ companyId: t.company.id, type: 'rules.failed' }),
    ).to.have.length(0);
  });
});
