/**
 * GET /analytics (issue 18): admin sessions only (employees and keys 403 with the error body), bounded
 * range, unknown parameters 400, every period present with zeros, and the figures of a company's real
 * activity (uploads, reports through the worker, failed rules, sensitive data, comparisons, key requests,
 * deliveries) equal to the same figures computed by direct SQL over the base tables — another company sees
 * none of them.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startWorker, testEnv } from '../helpers/env';
import { createApiKey, createTeam } from '../helpers/factories';
import { call, expectErrorBody } from '../helpers/http';
import { uploadFile, uploadTo } from '../helpers/files';
import { eventually } from '../helpers/temporal';

const DAY_MS = 86_400_000;
const day = (d: Date) => d.toISOString().slice(0, 10);
const today = () => day(new Date());
const daysAgo = (n: number) => day(new Date(Date.now() - n * DAY_MS));

// rows 2..4: row 3 has no email (the not_null rule fails); the e-mail column is personal data
const V1 = ['id,email,qty', '1,anna.smith@example.com,5', '2,,6', '3,li.chen@example.org,7'].join('\n');
const V2 = ['id,email,qty', '1,anna.smith@example.com,5', '2,,60', '4,omar.khan@example.net,8'].join('\n');

describe('GET /analytics', function () {
  this.timeout(180_000);

  it('refuses API keys (whatever their scopes) and employees with 403, anonymous callers with 401', async () => {
    const team = await createTeam({ plan: 'premium' });
    const key = await createApiKey(team.admin, [
      'files:read',
      'files:write',
      'audit:read',
      'billing:read',
      'rules:write',
      'notifications:read',
      'mcp',
    ]);
    expect(expectErrorBody(await call('GET', '/analytics', { token: key }), 403).message).to.equal(
      'API keys are not accepted on this endpoint',
    );
    expect(
      expectErrorBody(await call('GET', '/analytics', { token: team.employeeToken }), 403).message,
    ).to.equal('your role does not allow this');
    expectErrorBody(await call('GET', '/analytics'), 401);
  });

  it('answers 400 for unknown parameters, bad values and ranges over 366 days', async () => {
    const { adminToken } = await createTeam();
    const bad = async (query: string) =>
      expectErrorBody(await call('GET', `/analytics?${query}`, { token: adminToken }), 400).message;
    expect(await bad('foo=1')).to.match(/foo/);
    expect(await bad('granularity=hour')).to.match(/granularity/);
    expect(await bad('from=2026-02-30')).to.match(/from/);
    expect(await bad(`from=${daysAgo(366)}&to=${today()}`)).to.match(/at most 366 days/);
    expect(await bad(`from=${today()}&to=${daysAgo(1)}`)).to.match(/from must not be after/);
    const ok = await call('GET', `/analytics?from=${daysAgo(365)}&to=${today()}`, { token: adminToken });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body.periods).to.have.length(366);
  });

  it('returns every period of the range with zeros, by day, week and month', async () => {
    const { adminToken } = await createTeam();
    const res = await call('GET', '/analytics?from=2026-01-01&to=2026-03-31&granularity=week', {
      token: adminToken,
    });
    expect(res.status, res.text).to.equal(200);
    // 2026-01-01 is a Thursday: the first week is clipped to the range, then Mondays
    expect(res.body.periods[0]).to.include({ start: '2026-01-01', end: '2026-01-04' });
    expect(res.body.periods[1]).to.include({ start: '2026-01-05', end: '2026-01-11' });
    expect(res.body.periods.at(-1)).to.include({ start: '2026-03-30', end: '2026-03-31' });
    for (const p of res.body.periods) {
      expect(p).to.deep.include({
        uploads: { files: 0, versions: 0 },
        bytesUploaded: 0,
        bytesStored: 0,
        filesWithSensitiveData: 0,
        reports: { ready: 0, failed: 0 },
        averageQualityScore: null,
        activePeople: 0,
        apiRequests: 0,
      });
    }
    const months = await call('GET', '/analytics?from=2026-01-15&to=2026-03-02&granularity=month', {
      token: adminToken,
    });
    expect(months.body.periods.map((p: { start: string; end: string }) => [p.start, p.end])).to.deep.equal([
      ['2026-01-15', '2026-01-31'],
      ['2026-02-01', '2026-02-28'],
      ['2026-03-01', '2026-03-02'],
    ]);
    const days = await call('GET', '/analytics', { token: adminToken });
    expect(days.body.periods).to.have.length(30);
    expect(days.body.to).to.equal(today());
  });

  it('reports the bytes stored at the end of each period: uploads add, a deleted file’s versions subtract', async () => {
    const { knex } = testEnv();
    const team = await createTeam();
    const other = await createTeam();
    const kept = await uploadFile(V1, { token: team.adminToken, name: 'kept.csv' });
    expect(kept.status, kept.text).to.equal(201);
    const gone = await uploadFile(V2, { token: team.adminToken, name: 'gone.csv' });
    expect(gone.status, gone.text).to.equal(201);
    const again = await uploadTo(`/files/${gone.body.id}/versions`, V1, { token: team.adminToken });
    expect(again.status, again.text).to.equal(201);
    const del = await call('DELETE', `/files/${gone.body.id}`, { token: team.adminToken });
    expect(del.status, del.text).to.equal(204);

    const storedNow = Number(
      (
        (await knex.raw(`select sum(size_bytes) n from file_versions where company_id = ?`, [
          team.company.id,
        ])) as { rows: Array<{ n: string }> }
      ).rows[0].n,
    );
    expect(storedNow).to.equal(Buffer.byteLength(V1));
    const get = async (query: string, token = team.adminToken) => {
      const res = await call('GET', `/analytics?${query}`, { token });
      expect(res.status, res.text).to.equal(200);
      return res.body.periods as Array<{ start: string; bytesStored: number; bytesUploaded: number }>;
    };

    const days = await get(`from=${daysAgo(6)}&to=${today()}`);
    // before any upload: nothing stored
    expect(days.slice(0, 6).map((p) => p.bytesStored)).to.deep.equal([0, 0, 0, 0, 0, 0]);
    // today: what is left after the deletion, while the uploads of the day still count every version
    expect(days[6].bytesStored).to.equal(storedNow);
    expect(days[6].bytesUploaded).to.equal(2 * Buffer.byteLength(V1) + Buffer.byteLength(V2));
    // the same end value by week and by month, and over a longer range
    for (const query of [
      `from=${daysAgo(6)}&to=${today()}&granularity=week`,
      `from=${daysAgo(40)}&to=${today()}&granularity=month`,
      `from=${today()}&to=${today()}`,
    ])
      expect((await get(query)).at(-1)!.bytesStored, query).to.equal(storedNow);
    // a range after today starts from what is stored (the changes before the range), a range before it from 0
    const tomorrow = day(new Date(Date.now() + DAY_MS));
    expect((await get(`from=${tomorrow}&to=${tomorrow}`))[0].bytesStored).to.equal(storedNow);
    expect((await get(`from=${daysAgo(3)}&to=${daysAgo(1)}`)).map((p) => p.bytesStored)).to.deep.equal([
      0, 0, 0,
    ]);
    // another company's files are not in its figure
    expect((await get(`from=${today()}&to=${today()}`, other.adminToken))[0].bytesStored).to.equal(0);
  });

  describe('with a company’s activity (worker running)', () => {
    let stop: (() => Promise<void>) | undefined;
    before(async () => {
      const worker = await startWorker();
      stop = () => worker.stop();
    });
    after(async () => {
      await stop?.();
    });

    it('counts uploads, reports, quality, sensitive data, comparisons, requests and deliveries like SQL over the base tables', async () => {
      const { knex } = testEnv();
      const team = await createTeam({ plan: 'premium' });
      const other = await createTeam({ plan: 'premium' });
      const rule = await call('POST', '/rules', {
        token: team.adminToken,
        json: { name: 'email present', kind: 'not_null', column: 'email' },
      });
      expect(rule.status, rule.text).to.equal(201);

      const up = await uploadFile(V1, { token: team.adminToken, name: 'people.csv', visibility: 'company' });
      expect(up.status, up.text).to.equal(201);
      const fileId = up.body.id as string;
      const waitReport = (version: number) =>
        eventually(
          async () => {
            const r = await call('GET', `/files/${fileId}/versions/${version}/report`, {
              token: team.adminToken,
            });
            return r.body?.status === 'ready' || r.body?.status === 'failed' ? r.body : undefined;
          },
          { what: `report of v${version}`, timeoutMs: 90_000 },
        );
      expect((await waitReport(1)).status).to.equal('ready');
      const v2 = await uploadTo(`/files/${fileId}/versions`, V2, {
        token: team.adminToken,
        name: 'people.csv',
      });
      expect(v2.status, v2.text).to.equal(201);
      expect((await waitReport(2)).status).to.equal('ready');
      await eventually(
        async () => {
          const c = await call('GET', `/files/${fileId}/versions/2/comparison`, { token: team.adminToken });
          return c.body?.status === 'ready' ? c.body : undefined;
        },
        { what: 'comparison of v2', timeoutMs: 90_000 },
      );

      // requests with a key (and the employee's session)
      const key = await createApiKey(team.employee, ['files:read'], 'reader');
      for (let i = 0; i < 3; i++) expect((await call('GET', '/files', { token: key })).status).to.equal(200);
      await call('GET', '/files', { token: team.employeeToken });

      // deliveries end as the delivery workflows end them (a status change of the row)
      const endpointId = randomUUID();
      await knex('webhookEndpoints').insert({
        id: endpointId,
        companyId: team.company.id,
        name: 'hook',
        url: 'https://example.test/hook',
        events: ['ping'],
        active: false,
        secretEncrypted: 'x',
      });
      for (const status of ['succeeded', 'succeeded', 'failed']) {
        const id = randomUUID();
        await knex('webhookDeliveries').insert({
          id,
          companyId: team.company.id,
          endpointId,
          eventId: randomUUID(),
          eventType: 'ping',
          eventData: {},
          eventCreatedAt: new Date(),
          status: 'pending',
        });
        await knex('webhookDeliveries').where({ id }).update({ status });
      }

      const res = await call('GET', `/analytics?from=${daysAgo(6)}&to=${today()}`, {
        token: team.adminToken,
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.periods).to.have.length(7);
      for (const p of res.body.periods.slice(0, 6))
        expect(p.uploads).to.deep.equal({ files: 0, versions: 0 });
      const p = res.body.periods[6];

      // the same figures, straight from the base tables
      const c = team.company.id;
      const one = async (sql: string, bindings: string[] = [c]) =>
        Number(((await knex.raw(sql, bindings)) as { rows: Array<{ n: string }> }).rows[0].n);
      expect(p.uploads).to.deep.equal({
        files: await one(`select count(*) n from file_versions where company_id = ? and version = 1`),
        versions: await one(`select count(*) n from file_versions where company_id = ? and version > 1`),
      });
      expect(p.uploads).to.deep.equal({ files: 1, versions: 1 });
      expect(p.bytesUploaded).to.equal(
        await one(`select sum(size_bytes) n from file_versions where company_id = ?`),
      );
      expect(p.bytesUploaded).to.equal(Buffer.byteLength(V1) + Buffer.byteLength(V2));
      expect(p.reports).to.deep.equal({
        ready: await one(`select count(*) n from reports where company_id = ? and status = 'ready'`),
        failed: 0,
      });
      expect(p.reports.ready).to.equal(2);
      const scores = (await knex.raw(
        `select avg((result->'sections'->'quality'->>'score')::numeric) avg, count(*) n from reports
         where company_id = ? and status = 'ready' and result->'sections'->'quality'->>'score' is not null`,
        [c],
      )) as { rows: Array<{ avg: string; n: string }> };
      expect(p.scoredReports).to.equal(Number(scores.rows[0].n));
      expect(p.averageQualityScore).to.equal(Math.round(Number(scores.rows[0].avg) * 100) / 100);
      expect(p.rulesFailed).to.equal(2); // the rule failed in both versions
      expect(res.body.topFailedRules).to.deep.equal([
        { ruleId: rule.body.id, name: 'email present', failures: 2 },
      ]);
      expect(p.versionsWithSensitiveData).to.equal(
        await one(
          `select count(*) n from sensitive_findings where company_id = ? and jsonb_array_length(columns) > 0`,
        ),
      );
      expect(p.versionsWithSensitiveData).to.equal(2);
      // both flagged versions belong to one file
      expect(p.filesWithSensitiveData).to.equal(
        await one(
          `select count(distinct file_id) n from sensitive_findings where company_id = ? and jsonb_array_length(columns) > 0`,
        ),
      );
      expect(p.filesWithSensitiveData).to.equal(1);
      expect(p.bytesStored).to.equal(
        await one(`select sum(size_bytes) n from file_versions where company_id = ?`),
      );
      expect(p.comparisons).to.deep.equal({
        ready: await one(`select count(*) n from comparisons where company_id = ? and status = 'ready'`),
        withChanges: await one(
          `select count(*) n from comparisons where company_id = ? and status = 'ready' and change_count > 0`,
        ),
      });
      expect(p.comparisons).to.deep.equal({ ready: 1, withChanges: 1 });
      expect(p.apiRequests).to.equal(3);
      expect(res.body.apiRequestsByKey).to.have.length(1);
      expect(res.body.apiRequestsByKey[0]).to.include({ name: 'reader', total: 3 });
      expect(res.body.apiRequestsByKey[0].requests).to.deep.equal([0, 0, 0, 0, 0, 0, 3]);
      expect(p.webhookDeliveries).to.deep.equal({ succeeded: 2, failed: 1 });
      expect(res.body.webhookDeliveriesByEndpoint).to.deep.equal([
        { endpointId, name: 'hook', succeeded: [0, 0, 0, 0, 0, 0, 2], failed: [0, 0, 0, 0, 0, 0, 1] },
      ]);
      // the admin (uploads, this call) and the employee (session and key)
      expect(p.activePeople).to.equal(2);

      // a month at once sums the same days
      const month = await call('GET', `/analytics?from=${daysAgo(6)}&to=${today()}&granularity=month`, {
        token: team.adminToken,
      });
      const sum = (k: (x: typeof p) => number) =>
        month.body.periods.reduce((n: number, x: typeof p) => n + k(x), 0);
      expect(sum((x) => x.uploads.files)).to.equal(1);
      expect(sum((x) => x.apiRequests)).to.equal(3);
      expect(sum((x) => x.filesWithSensitiveData)).to.equal(1);
      expect(sum((x) => x.versionsWithSensitiveData)).to.equal(2);

      // the other company sees none of it
      const theirs = await call('GET', `/analytics?from=${daysAgo(6)}&to=${today()}`, {
        token: other.adminToken,
      });
      expect(theirs.status).to.equal(200);
      const q = theirs.body.periods[6];
      expect(q.uploads).to.deep.equal({ files: 0, versions: 0 });
      expect(q.reports).to.deep.equal({ ready: 0, failed: 0 });
      expect(q).to.include({ bytesStored: 0, filesWithSensitiveData: 0, versionsWithSensitiveData: 0 });
      expect(q.webhookDeliveries).to.deep.equal({ succeeded: 0, failed: 0 });
      expect(theirs.body.topFailedRules).to.deep.equal([]);
      expect(theirs.body.apiRequestsByKey).to.deep.equal([]);
      expect(q.activePeople).to.equal(1);
    });
  });
});
